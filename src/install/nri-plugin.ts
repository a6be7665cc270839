// The pre-installed NRI plugin both runtimes start (containerd's plugin_path, CRI-O's
// nri_plugin_dir): its `NN-envhook` name, the sh wrapper that runs `envhook nri`, and the defaults
// of the runtime's NRI socket and of the plugin's log.
import { EnvhookError } from '../errors.ts';
import type { Layout } from './layout.ts';
import { shQuote } from '../sh-quote.ts';
import { DAEMON_NODE_OPTION, SUPERVISOR_NODE_OPTION, SUPERVISOR_OPTION_ENV } from '../nri/process.ts';
import { HANDED_ENV, PLUGIN_FILE_ENV } from '../nri/roles.ts';
import { listenAddress } from '../listen-address.ts';

/** The plugin's two-digit index, the NN of NN-envhook (default 50): NRI orders plugins by it. */
export function nriIndex(index: string | undefined): string {
  const i = index ?? '50';
  if (!/^[0-9]{2}$/.test(i)) throw new EnvhookError(`--index must be two digits (00-99), as NRI names pre-installed plugins`);
  return i;
}

/** Where the runtime's NRI socket is by default (containerd's socket_path, CRI-O's nri_listen). */
export const NRI_DEFAULT_SOCKET = '/var/run/nri/nri.sock';
/** Where a pre-installed plugin's stderr goes by default: the runtime gives it /dev/null. */
export const NRI_DEFAULT_LOG = '/var/log/envhook-nri.log';

export interface WrapperOptions {
  /** The runtime's NRI socket: later workers dial it, and the instance lock is named after it. */
  socket: string;
  /** The file the plugin's stderr (its JSON log lines, unless logFile is set) is appended to. */
  log: string;
  /** The runtime's own CRI socket, for evictions (--cri-socket): install reads it from the runtime's config. */
  criSocket?: string | undefined;
  /** --evict-unapplied: evict every missed container, not only those of pods that ask. */
  evictUnapplied?: boolean | undefined;
  /** --metrics-address host:port. */
  metricsAddress?: string | undefined;
}

/** The plugin settings install takes as flags (--mode nri), written into the wrapper's command line. */
export interface PluginFlags {
  criSocket?: string | undefined;
  evictUnapplied?: boolean | undefined;
  metricsAddress?: string | undefined;
}

/** `envhook nri`'s flags for the wrapper: the CRI socket (the flag's, else the runtime's), eviction, metrics. */
function nriFlags(opts: WrapperOptions): string {
  return [
    ...(opts.criSocket ? [`--cri-socket ${shQuote(opts.criSocket)}`] : []),
    ...(opts.evictUnapplied ? ['--evict-unapplied'] : []),
    ...(opts.metricsAddress ? [`--metrics-address ${shQuote(opts.metricsAddress)}`] : []),
  ]
    .map((f) => ` ${f}`)
    .join('');
}

/** The executable the runtime starts: envhook nri with the settings of /etc/envhook/config.json. */
export function pluginWrapper(layout: Layout, opts: WrapperOptions = { socket: NRI_DEFAULT_SOCKET, log: NRI_DEFAULT_LOG }): Buffer {
  return Buffer.from(
    [
      '#!/bin/sh',
      '# envhook as a pre-installed NRI plugin (written by envhook install; removed by envhook uninstall).',
      '# The runtime starts it with the connection as fd 3 (NRI_PLUGIN_SOCKET), no PATH, and stdout and',
      "# stderr on /dev/null. envhook's supervisor keeps one worker registered: when one dies, the next",
      "# dials the runtime's socket (--socket) as an external plugin under the same name.",
      '# Logs: stderr is appended to the file below (a logFile in /etc/envhook/config.json wins), made',
      "# root's alone (0600); if it cannot be opened, envhook starts all the same.",
      '# One V8 worker thread, and no JIT for the supervisor (its worker gets NODE_OPTIONS without',
      `# ${SUPERVISOR_OPTION_ENV}'s option): less memory for a resident process, and none that creeps`,
      '# (envhook cannot re-execute itself with them here: the connection would not survive).',
      `NODE_OPTIONS="\${NODE_OPTIONS:+\$NODE_OPTIONS }${DAEMON_NODE_OPTION} ${SUPERVISOR_NODE_OPTION}"`,
      'export NODE_OPTIONS',
      `${SUPERVISOR_OPTION_ENV}=${SUPERVISOR_NODE_OPTION}`,
      `export ${SUPERVISOR_OPTION_ENV}`,
      `log=${shQuote(opts.log)}`,
      'if (umask 077 && : >>"$log") 2>/dev/null; then [ -f "$log" ] && chmod go= "$log" 2>/dev/null; exec 2>>"$log"; fi',
      "# The runtime SIGKILLs the process it started (this shell) once the plugin's connection has",
      "# closed: envhook's supervisor runs in the background with the connection, and this shell",
      `# exits 0 at once. ${HANDED_ENV} tells envhook it is that supervisor.`,
      `${HANDED_ENV}=1`,
      `export ${HANDED_ENV}`,
      '# This file, for an upgrade without a runtime restart: envhook install asks the running',
      '# envhook nri to start this file anew, and the envhook nri so started takes over from it.',
      `${PLUGIN_FILE_ENV}=$0`,
      `export ${PLUGIN_FILE_ENV}`,
      `exec ${shQuote(layout.bin)} nri --socket ${shQuote(opts.socket)}${nriFlags(opts)} &`,
      'exit 0',
      '',
    ].join('\n'),
  );
}

/** The socket a pre-installed envhook dials when its first connection is gone, and a note when the runtime refuses that. */
export function redialNote(runtime: string, socket: string, disabled: boolean): string {
  return disabled
    ? `${runtime} does not accept external NRI connections (${runtime === 'containerd' ? 'disable_connections' : 'nri_disable_connections'} = true): a pre-installed envhook that exits or hangs is not replaced until ${runtime} restarts`
    : `when its first worker exits or hangs, envhook registers again on ${socket} as an external plugin`;
}

/**
 * The plugin flags install was given, checked: --cri-socket an absolute path, --metrics-address
 * host:port (as envhook nri checks it), all only with --mode nri.
 */
export function checkPluginFlags(flags: PluginFlags, mode: string | undefined): PluginFlags {
  const given = Object.entries(flags).filter(([, v]) => v !== undefined && v !== false);
  if (given.length && mode !== 'nri') {
    const name = given[0]![0].replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    throw new EnvhookError(`--${name} is only valid with --mode nri (it is a setting of the NRI plugin)`);
  }
  if (flags.criSocket !== undefined && !flags.criSocket.startsWith('/'))
    throw new EnvhookError(`--cri-socket ${flags.criSocket}: must be an absolute path (the runtime's CRI socket)`);
  if (flags.metricsAddress !== undefined && !listenAddress(flags.metricsAddress))
    throw new EnvhookError(`--metrics-address ${flags.metricsAddress}: not a listen address: use host:port, [::1]:port or :port`);
  return flags;
}
