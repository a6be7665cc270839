// `envhook hook`: the OCI hook (hooks.d stage createRuntime, or prestart). The runtime already
// read config.json, so this stage cannot set env: it checks that the shim or the precreate
// stage applied it, and does the file work (ownership). Its output is lost under crun, so it
// logs to its own file (--log-file in the hooks.d entry) as well as to stderr.
import type { Command } from 'commander';
import { loadSpec, SPEC_LIMIT } from '../oci/spec.ts';
import { parseState } from '../oci/state.ts';
import { createLogger } from '../log.ts';
import { runPipeline } from '../bundle/spec-pipeline.ts';
import { addSettingFlags, settingsFrom, type SettingOptions } from './options.ts';
import { readStdin } from '../fs/stdin.ts';

export function registerHook(program: Command): void {
  addSettingFlags(program.command('hook').description('OCI hook (createRuntime or prestart): container state on stdin')).action(
    (opts: SettingOptions) => {
      const settings = settingsFrom(opts);
      const log = createLogger(settings.logFile, settings.logLevel, { fileGroup: settings.fileGroup });
      try {
        const { id, bundle } = parseState(readStdin(SPEC_LIMIT, 'container state'), 'container state on stdin');
        const loaded = loadSpec(bundle);
        const { plan } = runPipeline(loaded.spec, { settings, stage: 'hook', log, recordOwnersIn: settings.runDir });
        log.info({ id, bundle, container: plan.container, sandbox: plan.sandbox, owners: plan.owners.length }, 'hook done');
      } catch (err) {
        log.error({ err }, 'hook failed');
        throw err;
      }
    },
  );
}
