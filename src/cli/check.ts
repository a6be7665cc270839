// `envhook check FILE [--names]`: validate an env file (docs/design.md#modes, #env-files). Prints the number of
// variables and, with --names, the names in the order of their first definition (the order a
// Map keeps: a later duplicate changes the value, not the position). Never prints a value.
import type { Command } from 'commander';
import { EnvFileError, EnvhookError } from '../errors.ts';
import { parseEnvFile } from '../envfile/parse.ts';
import { MAX_FILE_BYTES } from '../envfile/syntax.ts';
import { readRegularFile } from '../fs/read-regular.ts';

export function registerCheck(program: Command): void {
  program
    .command('check')
    .description('validate an env file (KEP-3721 format): line-numbered errors, or the number of variables; never values')
    .argument('<file>', 'the env file')
    .option('--names', 'also print the names, one a line, in order of first definition')
    .action((file: string, opts: { names?: boolean }) => {
      const vars = checkEnvFile(file);
      const names = opts.names ? [...vars.keys()].map((name) => `${name}\n`).join('') : '';
      process.stdout.write(`${vars.size} ${vars.size === 1 ? 'variable' : 'variables'}\n${names}`);
    });
}

/** Read and parse FILE; every failure is an EnvhookError naming FILE (and the line). */
export function checkEnvFile(file: string): Map<string, string> {
  const bytes = readEnvFile(file);
  try {
    return parseEnvFile(bytes);
  } catch (err) {
    if (err instanceof EnvFileError) throw new EnvhookError(`${file}: ${err.message}`, { cause: err });
    throw err;
  }
}

/** At most MAX_FILE_BYTES + 1 bytes (one more than allowed, so the parser sees an oversized file as such). */
export function readEnvFile(file: string): Uint8Array {
  return readRegularFile(file, MAX_FILE_BYTES + 1);
}
