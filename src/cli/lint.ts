// `envhook lint FILE…`: check pod manifests before they reach a cluster. Findings on stdout
// (text or --format json), a summary on stderr; exit 1 when there is an error, 0 with warnings
// only. A file that cannot be read is a failure of the command itself: `envhook: …`, exit 1.
import type { Command } from 'commander';
import { Option } from 'commander';
import { EnvhookError } from '../errors.ts';
import { readManifest } from '../manifest/read.ts';
import { lintManifest, type Mode } from '../lint/lint.ts';
import { formatFinding, formatJson, summary, type Finding } from '../lint/finding.ts';

export function registerLint(program: Command): void {
  program
    .command('lint')
    .description('check the envhook annotations of pod manifests (YAML or JSON; - for stdin); never prints values')
    .argument('<file...>', 'manifests: Pods, pod templates of workloads, List objects')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .addOption(new Option('--mode <mode>', 'how the node runs envhook: shim (runtime class) or nri (NRI plugin)').choices(['shim', 'nri']).default('shim'))
    .action((files: string[], opts: { format: 'text' | 'json'; mode: Mode }) => {
      if (files.filter((f) => f === '-').length > 1) throw new EnvhookError('stdin (-) named more than once');
      const findings: Finding[] = [];
      // Read every file first: a missing file fails the run before any output.
      const manifests = files.map(readManifest);
      for (const m of manifests) findings.push(...lintManifest(m, { mode: opts.mode }));
      if (opts.format === 'json') process.stdout.write(`${formatJson(findings)}\n`);
      else for (const f of findings) process.stdout.write(`${formatFinding(f)}\n`);
      if (opts.format === 'text') process.stderr.write(`${summary(findings)}\n`);
      if (findings.some((f) => f.severity === 'error')) process.exitCode = 1;
    });
}
