// `envhook version` and `envhook --version`: one line, the same for both.
import type { Command } from 'commander';
import { VERSION } from '../version.ts';

export const versionLine = (): string => `envhook ${VERSION} (node ${process.versions.node})`;

export function registerVersion(program: Command): void {
  program
    .version(versionLine(), '--version', 'print the version (as `envhook version`)')
    .command('version')
    .description('print the version')
    .action(() => {
      process.stdout.write(`${versionLine()}\n`);
    });
}
