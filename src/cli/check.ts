// `envhook check FILE|- [--names] [--json]`: validate an env file (docs/design.md#modes, #env-files);
// `-` reads it from stdin, as `envhook lint -` reads a manifest. Prints the number of variables
// and, with --names, the names in the order of their first definition (the order a Map keeps: a
// later duplicate changes the value, not the position). Never prints a value. --json prints one
// object, the file's error in it (as `lint --format json` prints its findings), exit 1 on an
// error; a file that cannot be read is the one `envhook: …` line, as lint's is.
import type { Command } from 'commander';
import { EnvFileError, EnvhookError } from '../errors.ts';
import { parseEnvFile } from '../envfile/parse.ts';
import { MAX_FILE_BYTES } from '../envfile/syntax.ts';
import { readRegularFile } from '../fs/read-regular.ts';
import { readStdinBytes } from '../fs/stdin.ts';

/** What `check --json` prints: every key always present (null where there is nothing). */
export interface CheckReport {
  /** The file as named, `<stdin>` for `-`. */
  file: string;
  ok: boolean;
  /** The number of variables, null when the file is rejected. */
  variables: number | null;
  /** Their names in order of first definition (never values), null when the file is rejected. */
  names: string[] | null;
  /** The file's error: its line (null for the whole file) and the reason; null when valid. */
  error: { line: number | null; message: string } | null;
}

export function registerCheck(program: Command): void {
  program
    .command('check')
    .description('validate an env file (KEP-3721 format; - for stdin): line-numbered errors, or the number of variables; never values')
    .argument('<file>', 'the env file, or - to read it from stdin')
    .option('--names', 'also print the names, one a line, in order of first definition')
    .option('--json', 'print one JSON object (file, ok, variables, names, error); an invalid file is in it, exit 1')
    .action((file: string, opts: { names?: boolean; json?: boolean }) => {
      if (opts.json) {
        const report = checkReport(file);
        process.stdout.write(JSON.stringify(report, null, 2) + '\n');
        if (!report.ok) process.exitCode = 1;
        return;
      }
      const vars = checkEnvFile(file);
      const names = opts.names ? [...vars.keys()].map((name) => `${name}\n`).join('') : '';
      process.stdout.write(`${vars.size} ${vars.size === 1 ? 'variable' : 'variables'}\n${names}`);
    });
}

/** The report of FILE (`-`: stdin); a file that cannot be read throws, as in text mode. */
export function checkReport(file: string): CheckReport {
  const name = displayName(file);
  const bytes = readEnvFile(file);
  try {
    const vars = parseEnvFile(bytes);
    return { file: name, ok: true, variables: vars.size, names: [...vars.keys()], error: null };
  } catch (err) {
    if (!(err instanceof EnvFileError)) throw err;
    return { file: name, ok: false, variables: null, names: null, error: { line: err.line > 0 ? err.line : null, message: err.reason } };
  }
}

/** Read and parse FILE (`-`: stdin); every failure is an EnvhookError naming FILE (and the line). */
export function checkEnvFile(file: string): Map<string, string> {
  const bytes = readEnvFile(file);
  try {
    return parseEnvFile(bytes);
  } catch (err) {
    if (err instanceof EnvFileError) throw new EnvhookError(`${displayName(file)}: ${err.message}`, { cause: err });
    throw err;
  }
}

/** At most MAX_FILE_BYTES + 1 bytes (one more than allowed, so the parser sees an oversized file as such). */
export function readEnvFile(file: string): Uint8Array {
  if (file === '-') return readStdinBytes(MAX_FILE_BYTES + 1, 'env file', { cut: true });
  return readRegularFile(file, MAX_FILE_BYTES + 1);
}

const displayName = (file: string) => (file === '-' ? '<stdin>' : file);
