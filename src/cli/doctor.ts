// `envhook doctor [--json]`: the node end to end, one line a check (src/doctor/), then a count;
// exit status 1, with the problems' checks named on stderr, when any check found a problem.
import type { Command } from 'commander';
import { addNodeFlags } from './options.ts';
import type { NodeOptions } from '../doctor/node.ts';
import { checkLine } from '../doctor/check.ts';
import { doctor } from '../doctor/doctor.ts';

type DoctorOptions = NodeOptions & { json?: boolean };

export function registerDoctor(program: Command): void {
  addNodeFlags(program.command('doctor'))
    .description(
      "check the node end to end: settings, kubelet root, installs as the runtime reads them, the front's runtime, the NRI plugin, the owner watcher",
    )
    .option('--json', 'print one JSON object (keys: docs/nri-status.md, "envhook doctor")')
    .action(async (opts: DoctorOptions) => {
      const report = await doctor(opts);
      const { ok, problem, skipped } = report.counts;
      const summary = `doctor: ${ok} ok, ${problem} problems, ${skipped} skipped${skipped ? ' (not checked: see the skipped lines)' : ''}`;
      const text = [...report.checks.map(checkLine), summary].join('\n') + '\n';
      process.stdout.write(opts.json ? JSON.stringify(report, null, 2) + '\n' : text);
      if (!report.ok) {
        const names = [...new Set(report.checks.filter((c) => c.state === 'problem').map((c) => c.check))];
        process.stderr.write(
          `envhook: doctor: ${problem} problem${problem === 1 ? '' : 's'} (${names.join(', ')}): see the problem lines\n`,
        );
        process.exitCode = 1;
      }
    });
}
