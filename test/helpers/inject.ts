// Stand-in for `envhook inject --bundle DIR --kubelet-root ROOT` until the inject command
// lands on main: the same load → pipeline → flush, in process, with the CLI's error contract
// (one line `envhook: <message>`, status 1, config.json untouched on failure).
import { loadSpec, flushSpec } from '../../src/oci/spec.ts';
import { runPipeline } from '../../src/pipeline.ts';
import { describeError } from '../../src/errors.ts';
import { silentLogger } from '../../src/log.ts';

export interface InjectResult {
  status: number;
  stderr: string;
}

export function injectInProcess(bundle: string, kubeletRoot: string): InjectResult {
  try {
    const loaded = loadSpec(bundle);
    const settings = { kubeletRoot, runtime: 'runc', logFile: undefined, logLevel: 'info' as const };
    const { spec } = runPipeline(loaded.spec, { settings, stage: 'inject', log: silentLogger });
    flushSpec(loaded, spec);
    return { status: 0, stderr: '' };
  } catch (err) {
    return { status: 1, stderr: `envhook: ${describeError(err)}\n` };
  }
}
