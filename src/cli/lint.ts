// `envhook lint FILE…`: check pod manifests before they reach a cluster. Findings on stdout
// (text, or --format json / --json as install, status and check have it), a summary on stderr; exit 1 when there is an error, 0 with warnings
// only. A file that cannot be read is a failure of the command itself: `envhook: …`, exit 1.
import type { Command } from 'commander';
import { Option } from 'commander';
import { EnvhookError } from '../errors.ts';
import { adopt, loadTools } from './tools-loader.ts';

export function registerLint(program: Command): void {
  program
    .command('lint')
    .description('check the envhook annotations of pod manifests (YAML or JSON; - for stdin); never prints values')
    .argument('<file...>', 'manifests: Pods, pod templates of workloads, List objects')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .addOption(new Option('--json', 'the same as --format json').conflicts('format'))
    .addOption(
      new Option('--mode <mode>', 'how the node runs envhook: shim (runtime class) or nri (NRI plugin)')
        .choices(['shim', 'nri'])
        .default('shim'),
    )
    .action(async (files: string[], opts: { format: 'text' | 'json'; json?: boolean; mode: 'shim' | 'nri' }) => {
      if (files.filter((f) => f === '-').length > 1) throw new EnvhookError('stdin (-) named more than once');
      const tools = await loadTools();
      const out = adopt(() => tools.runLint(files, { format: opts.json ? 'json' : opts.format, mode: opts.mode }));
      process.stdout.write(out.stdout);
      process.stderr.write(out.stderr);
      if (out.failed) process.exitCode = 1;
    });
}
