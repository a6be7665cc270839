// `envhook convert --to native|annotations FILE…`: the converted manifests on stdout (several
// YAML files as one stream, `---` between them), or each file rewritten in place with --write (atomically, only when it changed);
// a note on stderr for everything left as it was. An invalid manifest fails before any output.
import type { Command } from 'commander';
import { Option } from 'commander';
import { EnvhookError } from '../errors.ts';
import { atomicWrite } from '../fs/atomic-write.ts';
import { adopt, loadTools } from './tools-loader.ts';

export function registerConvert(program: Command): void {
  program
    .command('convert')
    .description(
      'rewrite pod manifests between envhook annotations and the native Kubernetes fields (KEP-3721, KEP-5936, enableServiceLinks)',
    )
    .argument('<file...>', 'manifests (YAML or JSON; - for stdin)')
    .addOption(new Option('--to <form>', 'the form to write').choices(['native', 'annotations']).makeOptionMandatory())
    .option('-w, --write', 'rewrite each file in place instead of printing it')
    .option('--json', 'print one JSON array: per file {file, to, changed, written, notes, text}; nothing on stderr')
    .action(async (files: string[], opts: { to: 'native' | 'annotations'; write?: boolean; json?: boolean }) => {
      if (opts.write && files.includes('-')) throw new EnvhookError('--write cannot rewrite stdin');
      if (files.filter((f) => f === '-').length > 1) throw new EnvhookError('stdin (-) named more than once');
      const tools = await loadTools();
      const out = adopt(() => tools.runConvert(files, { to: opts.to, write: opts.write === true, json: opts.json === true }));
      process.stderr.write(out.stderr);
      process.stdout.write(out.stdout);
      for (const w of out.writes) atomicWrite(w.file, w.text);
    });
}
