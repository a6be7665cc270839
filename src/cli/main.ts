// The CLI entry: builds the commander program and is the only place that sets the exit
// status. Every failure is one line `envhook: <message>` on stderr with status 1.
import { Command, CommanderError } from 'commander';
import { describeError } from '../errors.ts';
import { registerVersion } from './version.ts';
import { registerInject } from './inject.ts';
import { registerCheck } from './check.ts';
import { registerInstall, registerUninstall } from './install.ts';
import { registerHook } from './hook.ts';
import { registerPrecreate } from './precreate.ts';
import { runShim } from '../shim/shim.ts';

export function buildProgram(): Command {
  const program = new Command('envhook')
    .description('KEP-3721 env files and KEP-5936 volume owners for any OCI runtime')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s), outputError: (s, write) => write(`envhook: ${s.replace(/^error: /, '').trimEnd()}\n`) });
  registerVersion(program);
  registerInject(program);
  registerCheck(program);
  registerInstall(program);
  registerUninstall(program);
  registerHook(program);
  registerPrecreate(program);
  return program;
}

export async function main(argv: string[] = process.argv): Promise<number> {
  try {
    // runc's argv is never seen by commander: `envhook shim <runc argv>` (from hooks/envhook-runtime).
    if (argv[2] === 'shim') {
      runShim(argv.slice(3));
      return 0;
    }
    await buildProgram().parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version output are successes; commander already printed its own line.
      return err.exitCode === 0 ? 0 : 1;
    }
    process.stderr.write(`envhook: ${describeError(err)}\n`);
    return 1;
  }
}

main().then((code) => {
  process.exitCode = code;
});
