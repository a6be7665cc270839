// `envhook check FILE [--names]`: validate an env file (SPEC §1, §4). Prints the number of
// variables and, with --names, the names in the order of their first definition (the order a
// Map keeps: a later duplicate changes the value, not the position). Never prints a value.
import fs from 'node:fs';
import type { Command } from 'commander';
import { EnvFileError, EnvhookError } from '../errors.ts';
import { parseEnvFile } from '../envfile/parse.ts';
import { MAX_FILE_BYTES } from '../envfile/syntax.ts';

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

/**
 * At most MAX_FILE_BYTES + 1 bytes of a regular file (one more than allowed, so the parser sees
 * an oversized file as such). O_NONBLOCK: opening a FIFO with no writer must not hang; fstat on
 * the open descriptor then refuses it, and devices, directories and sockets, without a race.
 * Symlinks are followed: FILE is named by the admin running the command, not by a pod.
 */
export function readEnvFile(file: string): Uint8Array {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (cause) {
    throw new EnvhookError(`cannot read ${file}: ${(cause as NodeJS.ErrnoException).code ?? 'error'}`, { cause });
  }
  try {
    if (!fs.fstatSync(fd).isFile()) throw new EnvhookError(`${file}: not a regular file`);
    const buf = new Uint8Array(MAX_FILE_BYTES + 1);
    let size = 0;
    for (let got = 1; got > 0 && size < buf.length; size += got) {
      got = fs.readSync(fd, buf, size, buf.length - size, null);
    }
    return buf.subarray(0, size);
  } catch (cause) {
    if (cause instanceof EnvhookError) throw cause;
    throw new EnvhookError(`cannot read ${file}: ${(cause as NodeJS.ErrnoException).code ?? 'error'}`, { cause });
  } finally {
    fs.closeSync(fd);
  }
}
