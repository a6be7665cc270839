// `envhook precreate`: Podman's precreate hook stage. config.json on stdin, the modified
// config on stdout and nothing else (Podman parses stdout as the new config), laid out like
// the input and lossless (unknown fields, big integers).
import type { Command } from 'commander';
import { parseSpec, SPEC_LIMIT } from '../oci/spec.ts';
import { createLogger } from '../log.ts';
import { runPipeline } from '../bundle/spec-pipeline.ts';
import { specOutput } from '../bundle/flush.ts';
import { addSettingFlags, settingsFrom, type SettingOptions } from './options.ts';
import { readStdin } from '../fs/stdin.ts';

export function registerPrecreate(program: Command): void {
  addSettingFlags(
    program.command('precreate').description('Podman precreate hook: config.json on stdin, modified config on stdout'),
  ).action((opts: SettingOptions) => {
    const settings = settingsFrom(opts);
    const log = createLogger(settings.logFile, settings.logLevel, { fileGroup: settings.fileGroup });
    try {
      const text = readStdin(SPEC_LIMIT, 'config');
      const spec = parseSpec(text, 'config on stdin');
      const { spec: out, plan } = runPipeline(spec, { settings, stage: 'precreate', log, recordOwnersIn: settings.runDir });
      // Nothing to do (a sandbox, no request): the input goes back byte for byte.
      process.stdout.write(specOutput(text, spec, out));
      log.info(
        { container: plan.container, env: plan.env.map((e) => e.name), removed: plan.removed, owners: plan.owners.length },
        'precreate done',
      );
    } catch (err) {
      log.error({ err }, 'precreate failed');
      throw err;
    }
  });
}
