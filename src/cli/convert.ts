// `envhook convert --to native|annotations FILE…`: the converted manifest on stdout (one file
// or stdin), or each file rewritten in place with --write (atomically, only when it changed);
// a note on stderr for everything left as it was. An invalid manifest fails before any output.
import type { Command } from 'commander';
import { Option } from 'commander';
import { EnvhookError } from '../errors.ts';
import { readManifest } from '../manifest/read.ts';
import { atomicWrite } from '../fs/atomic-write.ts';
import { convertManifest, type Target } from '../convert/convert.ts';
import { formatNote } from '../convert/note.ts';

export function registerConvert(program: Command): void {
  program
    .command('convert')
    .description('rewrite pod manifests between envhook annotations and the native Kubernetes fields (KEP-3721, KEP-5936, enableServiceLinks)')
    .argument('<file...>', 'manifests (YAML or JSON; - for stdin)')
    .addOption(new Option('--to <form>', 'the form to write').choices(['native', 'annotations']).makeOptionMandatory())
    .option('-w, --write', 'rewrite each file in place instead of printing it')
    .action((files: string[], opts: { to: Target; write?: boolean }) => {
      if (!opts.write && files.length > 1) throw new EnvhookError('several files: use --write to rewrite them in place');
      if (opts.write && files.includes('-')) throw new EnvhookError('--write cannot rewrite stdin');
      // Everything is converted before anything is written: a bad file leaves all files as they were.
      const results = files.map((f) => ({ file: f, ...convertManifest(readManifest(f), opts.to) }));
      for (const r of results) for (const n of r.notes) process.stderr.write(`${formatNote(n)}\n`);
      for (const r of results) {
        if (!opts.write) process.stdout.write(r.text);
        else if (r.changed) atomicWrite(r.file, r.text);
      }
    });
}
