// `envhook version` and `envhook --version`: one line, the same for both: the version, the
// commit it was built from, and the Node it runs on.
import type { Command } from 'commander';
import { VERSION_AND_COMMIT } from '../version.ts';

export const versionLine = (): string => `envhook ${VERSION_AND_COMMIT.replace(/\)$/, '')}; node ${process.versions.node})`;

export function registerVersion(program: Command): void {
  program
    .version(versionLine(), '--version', 'print the version (as `envhook version`)')
    .command('version')
    .description('print the version and the commit it was built from')
    .action(() => {
      process.stdout.write(`${versionLine()}\n`);
    });
}
