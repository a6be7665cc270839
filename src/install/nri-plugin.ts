// The pre-installed NRI plugin both runtimes start (containerd's plugin_path, CRI-O's
// nri_plugin_dir): its `NN-envhook` name, the sh wrapper that runs `envhook nri`, and the defaults
// of the runtime's NRI socket and of the plugin's log.
import { EnvhookError } from '../errors.ts';
import type { Layout } from './layout.ts';
import { shQuote } from '../sh-quote.ts';
import { DAEMON_NODE_OPTION } from '../nri/process.ts';
import { HANDED_ENV } from '../nri/roles.ts';

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
      '# One V8 worker thread: less memory for a resident process (envhook cannot re-execute',
      '# itself with it here: the connection would not survive).',
      `NODE_OPTIONS="\${NODE_OPTIONS:+\$NODE_OPTIONS }${DAEMON_NODE_OPTION}"`,
      'export NODE_OPTIONS',
      `log=${shQuote(opts.log)}`,
      'if (umask 077 && : >>"$log") 2>/dev/null; then [ -f "$log" ] && chmod go= "$log" 2>/dev/null; exec 2>>"$log"; fi',
      "# The runtime SIGKILLs the process it started (this shell) once the plugin's connection has",
      "# closed: envhook's supervisor runs in the background with the connection, and this shell",
      `# exits 0 at once. ${HANDED_ENV} tells envhook it is that supervisor.`,
      `${HANDED_ENV}=1`,
      `export ${HANDED_ENV}`,
      `exec ${shQuote(layout.bin)} nri --socket ${shQuote(opts.socket)} &`,
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
