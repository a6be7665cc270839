import type { Command } from 'commander';
import { VERSION } from '../version.ts';

export function registerVersion(program: Command): void {
  program
    .command('version')
    .description('print the version')
    .action(() => {
      process.stdout.write(`envhook ${VERSION} (node ${process.versions.node})\n`);
    });
}
