// runc's `exec` options, as runc 1.1 reads them: Go's flag package with no reordering (runc sets
// SkipArgReorder for exec), so the options end at the container id and everything after it is
// the command. hooks/envhook-runtime reads the same argv with the same rules; the table in
// test/oci/runc-exec-args.test.ts is checked against both.
import { asFlag } from './runc-args.ts';

/** exec's process file option (also the front's table: scripts/front-tables.ts). */
export const PROCESS_OPTIONS = ['process', 'p'] as const;
/** exec options that take a value (runc 1.1; crun's are a subset), the process file's too. */
export const EXEC_VALUE_OPTIONS = new Set<string>([
  ...PROCESS_OPTIONS,
  'console-socket',
  'cwd',
  'env',
  'e',
  'user',
  'u',
  'additional-gids',
  'g',
  'pid-file',
  'process-label',
  'apparmor',
  'cap',
  'c',
  'preserve-fds',
  'cgroup',
]);

export interface ExecArgs {
  /** `--process`/`-p` (last one wins), or undefined: runc then builds the process from config.json. */
  process: string | undefined;
  /** The container id, or undefined when the argv has none (runc refuses it). */
  id: string | undefined;
}

/**
 * The options of `exec` (argv after the subcommand). Never throws: an option runc does not
 * know is taken as a boolean, and runc refuses it itself.
 */
export function parseExecArgs(args: readonly string[]): ExecArgs {
  let process: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return done(args[i + 1]);
    const flag = asFlag(arg);
    if (!flag) return done(arg);
    if (!EXEC_VALUE_OPTIONS.has(flag.name)) continue;
    const value = flag.inline ?? args[++i];
    if (value === undefined) break;
    if ((PROCESS_OPTIONS as readonly string[]).includes(flag.name)) process = value;
  }
  return done(undefined);

  function done(id: string | undefined): ExecArgs {
    // runc treats an empty --process as none given.
    return { process: process === '' ? undefined : process, id };
  }
}
