// The CLI entry: builds the commander program and is the only place that sets the exit
// status. Every failure is one line `envhook: <message>` on stderr with status 1.
//
// Start-up is part of every container start, so only the running command's modules are
// loaded: `envhook shim` (the runtime front, on every create) never loads commander, and a
// named command registers only itself. Help, unknown commands and no command get the whole
// program, so their output is what it always was. In the esbuild bundle the dynamic imports
// stay lazy (each module is evaluated on first import), so this holds there too.
import type { Command } from 'commander';
import { describeError } from '../errors.ts';
import { endQuietlyOnClosedPipe } from './closed-pipe.ts';

type Register = (program: Command) => void;

/** Command name → its register function, in the order the top-level help lists them. */
const COMMANDS: Record<string, () => Promise<Register>> = {
  version: async () => (await import('./version-command.ts')).registerVersion,
  inject: async () => (await import('./inject.ts')).registerInject,
  check: async () => (await import('./check.ts')).registerCheck,
  install: async () => (await import('./install.ts')).registerInstall,
  uninstall: async () => (await import('./install.ts')).registerUninstall,
  shim: async () => (await import('./shim-usage.ts')).registerShimHelp,
  hook: async () => (await import('./hook.ts')).registerHook,
  precreate: async () => (await import('./precreate.ts')).registerPrecreate,
  watch: async () => (await import('./watch.ts')).registerWatch,
  lint: async () => (await import('./lint.ts')).registerLint,
  convert: async () => (await import('./convert.ts')).registerConvert,
  nri: async () => (await import('./nri.ts')).registerNri,
  status: async () => (await import('./status.ts')).registerStatus,
  doctor: async () => (await import('./doctor.ts')).registerDoctor,
};

/** The program with every command, or only `only` when it names one. */
export async function buildProgram(only?: string): Promise<Command> {
  const { Command } = await import('commander');
  const program = new Command('envhook')
    .description('KEP-3721 env files and KEP-5936 volume owners for any OCI runtime')
    .exitOverride()
    .configureOutput({
      writeErr: (s) => process.stderr.write(s),
      // One line: commander's suggestion ("(Did you mean install?)") joins the error's line.
      outputError: (s, write) =>
        write(
          `envhook: ${s
            .replace(/^error: /, '')
            .trim()
            .replace(/\s*\n\s*/g, ' ')}\n`,
        ),
    });
  // `--version` is the version command's option: only that command is loaded for it
  const one = only === '--version' ? 'version' : only;
  const names = one !== undefined && Object.hasOwn(COMMANDS, one) ? [one] : Object.keys(COMMANDS);
  for (const name of names) (await COMMANDS[name]!())(program);
  return program;
}

export async function main(argv: string[] = process.argv): Promise<number> {
  // Not for the shim's create: touching process.stdout on a pipe loads node:net, on every
  // container start (test/build.test.ts); its usage output sets the handlers itself.
  if (argv[2] !== 'shim') endQuietlyOnClosedPipe();
  try {
    // runc's argv is never seen by commander: `envhook shim <runc argv>` (from hooks/envhook-runtime).
    if (argv[2] === 'shim') return await shim(argv.slice(3));
    if (argv[2] === 'help' && argv[3] === 'shim') return await shim(['--help']);
    // `help NAME` of no command is refused as `NAME` itself is (commander would print the whole help).
    const named = argv[2] === 'help' && argv[3] !== undefined && !argv[3].startsWith('-') ? argv[3] : undefined;
    if (named !== undefined && !Object.hasOwn(COMMANDS, named)) argv = [...argv.slice(0, 2), named];
    await (await buildProgram(argv[2])).parseAsync(argv);
    // A command that ran to its end but found problems (lint) sets process.exitCode itself.
    return Number(process.exitCode ?? 0);
  } catch (err) {
    const { CommanderError } = await import('commander');
    if (err instanceof CommanderError) {
      // Help and version output are successes; commander already printed its own line.
      return err.exitCode === 0 ? 0 : 1;
    }
    process.stderr.write(`envhook: ${describeError(err)}\n`);
    return 1;
  }
}

async function shim(runcArgv: string[]): Promise<number> {
  // As runc itself: no arguments, or only --help, print the usage.
  if (runcArgv.length === 0 || (runcArgv.length === 1 && (runcArgv[0] === '--help' || runcArgv[0] === '-h'))) {
    endQuietlyOnClosedPipe();
    process.stdout.write((await import('./shim-usage.ts')).SHIM_USAGE);
    return 0;
  }
  const { runShim } = await import('../shim/shim.ts');
  runShim(runcArgv);
  return 0;
}

// main() never rejects: every error ends in its catch, as one line and a status.
void main().then((code) => {
  process.exitCode = code;
});
