// A pure parser of runc's argv, as runc 1.1 (urfave/cli v1 over Go's flag package) reads it:
// `-x` and `--x` are the same flag, `--x=v` and `--x v` the same value, a repeated flag's
// last value wins, `--` ends the flags, and a subcommand's flags may also follow its
// positional arguments (urfave/cli v1 reorders them). hooks/envhook-runtime finds the
// subcommand with the same rules; test/oci/runc-args.cases.ts holds the table both are tested on.
import { EnvhookError } from '../errors.ts';

// These tables are also the front's: scripts/build.mjs writes them into hooks/envhook-runtime
// (scripts/front-tables.ts), so the two cannot differ.

/** Global options that take a value (runc's, plus crun's `--log-level`, `--cgroup-manager`). */
export const GLOBAL_VALUE_OPTIONS = ['root', 'log', 'log-format', 'criu', 'rootless', 'log-level', 'cgroup-manager'] as const;
/** Global flags that make runc print help or its version instead of running a subcommand. */
export const GLOBAL_INFO_FLAGS = ['help', 'h', 'version', 'v'] as const;

/** create/run: the bundle's option, and every option that takes a value (the bundle's too). */
export const BUNDLE_OPTIONS = ['bundle', 'b'] as const;
export const CREATE_VALUE_OPTIONS = new Set<string>([...BUNDLE_OPTIONS, 'console-socket', 'pid-file', 'preserve-fds']);
export const CREATE_BOOLEAN_OPTIONS = new Set(['no-pivot', 'no-new-keyring']);
export const RUN_BOOLEAN_OPTIONS = new Set(['detach', 'd', 'keep', 'no-subreaper']);

export interface RuncArgs {
  /** Index of the subcommand in argv, or -1 (no subcommand, or help/version asked for). */
  subcommandIndex: number;
  subcommand: string | undefined;
  /** Global options with values (last one wins), e.g. root, log, log-format. */
  globals: Record<string, string>;
}

export interface CreateArgs {
  /** The bundle as given (`--bundle`/`-b`), or undefined for runc's default: the working directory. */
  bundle: string | undefined;
  id: string;
  /** `--help`/`-h` was given: runc prints help and creates nothing. */
  help: boolean;
}

interface Flag {
  name: string;
  inline: string | undefined;
}

/** `-x`, `--x`, `-x=v`, `--x=v` → name and inline value; undefined for a non-flag. */
export function asFlag(arg: string): Flag | undefined {
  if (arg.length < 2 || arg[0] !== '-' || arg === '--') return undefined;
  const body = arg.startsWith('--') ? arg.slice(2) : arg.slice(1);
  const eq = body.indexOf('=');
  return eq < 0 ? { name: body, inline: undefined } : { name: body.slice(0, eq), inline: body.slice(eq + 1) };
}

/** Finds the subcommand, skipping global options and their values. Never throws. */
export function parseRuncArgs(argv: readonly string[]): RuncArgs {
  const globals: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return at(i + 1);
    const flag = asFlag(arg);
    if (!flag) return at(i);
    if ((GLOBAL_INFO_FLAGS as readonly string[]).includes(flag.name)) return { subcommandIndex: -1, subcommand: undefined, globals };
    if ((GLOBAL_VALUE_OPTIONS as readonly string[]).includes(flag.name)) {
      const value = flag.inline ?? argv[++i];
      if (value === undefined) break;
      globals[flag.name] = value;
    }
    // Any other flag is taken as a boolean (--debug, --systemd-cgroup, unknown ones: runc
    // rejects those itself).
  }
  return { subcommandIndex: -1, subcommand: undefined, globals };

  function at(index: number): RuncArgs {
    const subcommand = argv[index];
    return subcommand === undefined ? { subcommandIndex: -1, subcommand, globals } : { subcommandIndex: index, subcommand, globals };
  }
}

/**
 * The options of `create` or `run` (argv after the subcommand). Unknown options fail: a
 * runtime that would reject them must not get a rewritten config.json, and an option we do
 * not know could change which bundle runc reads.
 */
export function parseCreateArgs(subcommand: 'create' | 'run', args: readonly string[]): CreateArgs {
  let bundle: string | undefined;
  let help = false;
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    const flag = asFlag(arg);
    if (!flag) {
      positionals.push(arg);
      continue;
    }
    if (flag.name === 'help' || flag.name === 'h') help = true;
    else if (CREATE_VALUE_OPTIONS.has(flag.name)) {
      const value = flag.inline ?? args[++i];
      if (value === undefined) throw new EnvhookError(`runc ${subcommand}: option -${flag.name} needs a value`);
      if ((BUNDLE_OPTIONS as readonly string[]).includes(flag.name)) bundle = value;
    } else if (!CREATE_BOOLEAN_OPTIONS.has(flag.name) && !(subcommand === 'run' && RUN_BOOLEAN_OPTIONS.has(flag.name))) {
      throw new EnvhookError(`runc ${subcommand}: unknown option ${JSON.stringify(arg.split('=')[0])}`);
    }
  }
  if (help) return { bundle, id: '', help };
  if (positionals.length !== 1)
    throw new EnvhookError(`runc ${subcommand}: expected one container id, got ${positionals.length} arguments`);
  // runc treats an empty --bundle as "the working directory".
  return { bundle: bundle === '' ? undefined : bundle, id: positionals[0]!, help };
}
