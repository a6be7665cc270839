// No leaks (docs/design.md#invariants): over at least 10,000 generated env files and annotation values carrying a
// canary, the canary never appears in a message, in the pino log at debug level, on stdout or
// stderr of a CLI entry point, or in the runtime --log file. The bulk runs in-process; inputs of
// every kind of outcome the bulk reaches go through the real bundled CLI.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { checkEnvFile } from '../../src/cli/check.ts';
import { describeError, serializeCause } from '../../src/errors.ts';
import { createLogger } from '../../src/log.ts';
import { hostileAnnotations, hostileEnvFile, wellFormedAnnotations, TAG } from './gen.ts';
import { runPipeline } from '../../src/bundle/spec-pipeline.ts';
import { formatPlan } from '../../src/cli/format-plan.ts';
import type { Settings } from '../../src/settings.ts';
import type { Spec } from '../../src/oci/spec.ts';
import { execFileSync } from 'node:child_process';
import {
  envhookCli,
  fastTempDir,
  frontCreate,
  hookRun,
  makeCanary,
  pool,
  precreateRun,
  readIf,
  runtimeBundle,
  tempFiles,
} from './helpers.ts';

// Hundreds of CLI runs: a busy 2-core machine can take longer than the default 120 s.
t.setTimeout(300_000);

const canary = makeCanary(TAG);
export const FUZZ_RUNS = 10_000;

/** Every string an error could reach an output through. */
function errorTexts(err: unknown): string {
  const e = err as Error;
  return [describeError(err), e?.message, JSON.stringify(serializeCause(err) ?? null), (e as { reason?: string })?.reason ?? ''].join('\n');
}

/**
 * The kind of an outcome: the success kind `run` returns, or the error's message with what
 * varies between inputs of the same kind (quoted names and values, JSON paths, numbers) blanked out.
 */
function outcomeOf(run: () => string): string {
  try {
    return run();
  } catch (err) {
    return describeError(err)
      .replace(/"[^"]*"/g, '"…"')
      .replace(/\/[^\s:]*/g, '/…')
      .replace(/\d+/g, 'N');
  }
}

/**
 * Samples for the real CLI: generated in bulk, sorted by the kind of outcome they get in-process,
 * and the first few of each kind kept, with their rank in the kind: `SUCCESSES` of a success
 * (values carrying the canary reach config.json, the plan and the debug log), `perError` of an error. A
 * random sample repeats a few kinds hundreds of times (a process each: the cost on a busy
 * machine); this one takes every kind the bulk reaches through the CLI in a few dozen processes.
 */
function fewPerKind<T>(
  pool: readonly T[],
  kindOf: (sample: T) => string,
  perError: number,
): { samples: { sample: T; rank: number }[]; kinds: Map<string, number> } {
  const kinds = new Map<string, number>();
  const samples: { sample: T; rank: number }[] = [];
  for (const sample of pool) {
    const kind = kindOf(sample);
    const rank = kinds.get(kind) ?? 0;
    kinds.set(kind, rank + 1);
    if (rank < (SUCCESS_KINDS.has(kind) ? SUCCESSES : perError)) samples.push({ sample, rank });
  }
  return { samples, kinds };
}

const SUCCESS_KINDS = new Set(['ok', 'ok, canary in a value', 'applied', 'untouched']);
const SUCCESSES = 8;

/** Generated inputs sorted into kinds per CLI test (cheap, in-process). */
const POOL = 1000;

t.test(`env files: ${FUZZ_RUNS} generated files through envhook check in-process, log at debug`, async (t) => {
  const dir = t.testdir({});
  // tmpfs: rewriting one file 10,000 times on ext4 flushes it each time (auto_da_alloc).
  const shm = fs.mkdtempSync(fs.existsSync('/dev/shm') ? '/dev/shm/envhook-leaks-' : path.join(dir, 'f-'));
  t.teardown(() => fs.rmSync(shm, { recursive: true, force: true }));
  const file = path.join(shm, 'app.env');
  const logFile = path.join(dir, 'log.jsonl');
  const log = createLogger(logFile, 'debug');
  let accepted = 0;
  let rejected = 0;
  // Accepted files whose values hold the canary: proof that it really flows through.
  let carried = 0;
  fc.assert(
    fc.property(hostileEnvFile(canary), (bytes) => {
      fs.writeFileSync(file, bytes);
      try {
        const vars = checkEnvFile(file);
        accepted++;
        if ([...vars.values()].some((v) => v.includes(TAG))) carried++;
        log.debug({ file, names: [...vars.keys()], count: vars.size }, 'env file checked');
        return true;
      } catch (err) {
        rejected++;
        log.debug({ err, file }, 'env file rejected');
        log.error({ err }, describeError(err));
        return !errorTexts(err).includes(TAG);
      }
    }),
    { numRuns: FUZZ_RUNS },
  );
  log.flush();
  const logged = fs.readFileSync(logFile, 'utf8');
  t.equal(logged.split('\n').length - 1, accepted + 2 * rejected, 'every outcome was logged');
  t.notMatch(logged, TAG, 'no canary in the debug log');
  t.ok(rejected > FUZZ_RUNS / 2 && accepted > FUZZ_RUNS / 5, `both outcomes exercised: ${accepted} accepted, ${rejected} rejected`);
  t.ok(carried > accepted / 2, `the canary reached the values of ${carried} accepted files`);
});

t.test('env files: each kind of outcome through the real CLI (envhook check, --names)', async (t) => {
  const dir = t.testdir({});
  const probe = path.join(dir, 'probe.env');
  // Every other one of a kind with --names.
  const { samples, kinds } = fewPerKind(
    fc.sample(hostileEnvFile(canary), POOL),
    (bytes) => {
      fs.writeFileSync(probe, bytes);
      return outcomeOf(() => ([...checkEnvFile(probe).values()].some((v) => v.includes(TAG)) ? 'ok, canary in a value' : 'ok'));
    },
    2,
  );
  t.ok(
    (kinds.get('ok, canary in a value') ?? 0) >= 2 && kinds.size > 15,
    `${kinds.size} kinds of outcome in ${POOL} files: ${samples.length} runs`,
  );
  const results = await pool(
    samples.map(({ sample, rank }, n) => async () => {
      const file = path.join(dir, `s${n}.env`);
      fs.writeFileSync(file, sample);
      return envhookCli(['check', ...(rank % 2 ? ['--names'] : []), file]);
    }),
  );
  const leaks = results.filter((r) => (r.out + r.err).includes(TAG));
  t.equal(leaks.length, 0, `no canary on stdout or stderr of ${results.length} runs`);
  t.ok(
    results.every((r) => (r.code === 0 && r.err === '') || (r.code === 1 && /^envhook: [^\n]+\n$/.test(r.err) && r.out === '')),
    'each run: success, or one line on stderr and status 1',
  );
  t.comment(`check CLI: ${results.filter((r) => r.code === 0).length} accepted, ${results.filter((r) => r.code === 1).length} rejected`);
});

/** A volume directory on tmpfs with the generated env file, a symlink out and a FIFO. */
function volumeDir(t: Test): string {
  const dir = fs.mkdtempSync(fs.existsSync('/dev/shm') ? '/dev/shm/envhook-vol-' : path.join(t.testdirName, 'vol-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'outside.env'), `A='${canary}'\n`);
  fs.mkdirSync(path.join(dir, 'cfg'));
  fs.symlinkSync('../outside.env', path.join(dir, 'cfg/link.env'));
  execFileSync('mkfifo', [path.join(dir, 'cfg/fifo')]);
  return path.join(dir, 'cfg');
}

function specFor(annotations: Record<string, string>): Spec {
  return {
    ociVersion: '1.0.2',
    process: {
      args: ['sh'],
      env: [
        'PATH=/bin',
        `IMAGE_SECRET=${canary}`,
        'KUBERNETES_SERVICE_HOST=10.0.0.1',
        'DB_SERVICE_HOST=10.0.0.2',
        `DB_PORT=tcp://${canary}`,
      ],
    },
    annotations: { 'io.kubernetes.cri.container-name': 'app', ...annotations },
  };
}

t.test(`annotations and env files: ${FUZZ_RUNS} generated starts through the pipeline in-process, log at debug`, async (t) => {
  const vol = volumeDir(t);
  const logFile = path.join(t.testdir({}), 'log.jsonl');
  const log = createLogger(logFile, 'debug');
  const settings: Settings = { kubeletRoot: '/nonexistent-kubelet', runtime: 'runc', logFile, logLevel: 'debug' };
  const outcomes = { applied: 0, untouched: 0, rejected: 0 };
  let carried = 0;
  const reasons = new Map<string, number>();
  fc.assert(
    fc.property(
      hostileEnvFile(canary),
      fc.oneof(hostileAnnotations(canary), {
        arbitrary: wellFormedAnnotations(canary),
        weight: 2,
      }),
      fc.constantFrom('inject', 'inject', 'create', 'precreate', 'hook'),
      (file, annotations, stage) => {
        fs.writeFileSync(path.join(vol, 'app.env'), file);
        const spec = specFor(annotations);
        const before = JSON.stringify(spec);
        try {
          const { spec: out, plan } = runPipeline(spec, {
            settings,
            stage: stage as 'inject',
            log,
            volumes: new Map([['cfg', vol]]),
            dryRun: stage === 'inject',
          });
          log.debug({ plan }, 'plan');
          if (out === spec) outcomes.untouched++;
          else outcomes.applied++;
          const outEnv = ((out.process as { env?: string[] }).env ?? []) as string[];
          if (plan.env.some((e) => outEnv.find((x) => x.startsWith(`${e.name}=`))?.includes(TAG))) carried++;
          return !formatPlan(plan).includes(TAG) && JSON.stringify(spec) === before;
        } catch (err) {
          outcomes.rejected++;
          log.error({ err }, describeError(err));
          const r = describeError(err)
            .replace(/"[^"]*"/g, '"…"')
            .replace(/\d+/g, 'N');
          reasons.set(r, (reasons.get(r) ?? 0) + 1);
          return !errorTexts(err).includes(TAG) && JSON.stringify(spec) === before;
        }
      },
    ),
    { numRuns: FUZZ_RUNS },
  );
  log.flush();
  const logged = fs.readFileSync(logFile, 'utf8');
  t.notMatch(logged, TAG, `no canary in ${logged.split('\n').length - 1} debug log lines`);
  t.ok(outcomes.applied > FUZZ_RUNS / 20 && outcomes.rejected > FUZZ_RUNS / 5, `outcomes ${JSON.stringify(outcomes)}`);
  t.ok(carried > outcomes.applied / 2, `the canary reached variables envhook set in ${carried} starts`);
  t.comment(`distinct rejection reasons: ${reasons.size}`);
  for (const [r, n] of [...reasons].sort((a, b) => b[1] - a[1]).slice(0, 40)) t.comment(`${n} × ${r}`);
});

/** The pipeline's outcome for a generated start at `stage`, in-process: "applied", "untouched" or the kind of error. */
function pipelineKind(t: Test, stage: 'inject' | 'create'): (sample: [Buffer, Record<string, string>]) => string {
  const vol = volumeDir(t);
  const log = createLogger(undefined);
  return ([file, annotations]) => {
    fs.writeFileSync(path.join(vol, 'app.env'), file);
    const spec = specFor(annotations);
    const options = { settings: { kubeletRoot: '/nonexistent-kubelet' }, stage, log, volumes: new Map([['cfg', vol]]), dryRun: true };
    return outcomeOf(() => (runPipeline(spec, options).spec === spec ? 'untouched' : 'applied'));
  };
}

const starts = () =>
  fc.sample(
    fc.tuple(hostileEnvFile(canary), fc.oneof(hostileAnnotations(canary), { arbitrary: wellFormedAnnotations(canary), weight: 3 })),
    POOL,
  );

t.test('annotations and env files: each kind of outcome through the real CLI (envhook inject, --dry-run), log at debug', async (t) => {
  const root = fastTempDir('envhook-leak-cli-');
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  // Every other one of a kind a dry run.
  const { samples, kinds } = fewPerKind(starts(), pipelineKind(t, 'inject'), 2);
  t.ok((kinds.get('applied') ?? 0) >= 2 && kinds.size > 25, `${kinds.size} kinds of outcome in ${POOL} starts: ${samples.length} runs`);
  const results = await pool(
    samples.map(({ sample: [file, annotations], rank }, i) => async () => {
      const dir = path.join(root, `s${i}`);
      const vol = path.join(dir, 'cfg');
      fs.mkdirSync(vol, { recursive: true });
      fs.writeFileSync(path.join(vol, 'app.env'), file);
      fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(specFor(annotations), null, '\t'));
      const before = fs.readFileSync(path.join(dir, 'config.json'));
      const log = path.join(dir, 'envhook.log');
      const dryRun = rank % 2 === 1;
      const r = await envhookCli([
        'inject',
        '--bundle',
        dir,
        '--volume',
        `cfg=${vol}`,
        '--log-file',
        log,
        '--log-level',
        'debug',
        ...(dryRun ? ['--dry-run'] : []),
      ]);
      const logged = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
      const after = fs.readFileSync(path.join(dir, 'config.json'));
      return { r, dryRun, logged, unchanged: before.equals(after), temps: tempFiles(dir).length };
    }),
  );
  t.equal(
    results.filter((x) => (x.r.out + x.r.err + x.logged).includes(TAG)).length,
    0,
    `no canary on stdout, stderr or the debug log of ${results.length} runs`,
  );
  t.ok(
    results.every((x) => x.logged.length > 0),
    'every run logged',
  );
  const failed = results.filter((x) => x.r.code !== 0);
  t.ok(
    failed.every((x) => x.r.code === 1 && /^envhook: [^\n]+\n$/.test(x.r.err) && x.r.out === '' && x.unchanged),
    'each failure: one line, status 1, config.json byte-identical',
  );
  t.ok(
    results.filter((x) => x.dryRun).every((x) => x.unchanged),
    'a dry run changes nothing',
  );
  t.ok(
    results.every((x) => x.temps === 0),
    'no temporary file left',
  );
  t.comment(
    `inject CLI: ${results.length - failed.length} succeeded (${
      results.filter((x) => x.r.code === 0 && !x.unchanged).length
    } rewrote config.json), ${failed.length} failed`,
  );
});

t.test(
  'annotations and env files: each kind of outcome through the runtime entry points (shim front with --log, hook, precreate), log at debug',
  async (t) => {
    const root = fastTempDir('envhook-leak-rt-');
    t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
    // Each through the three entry points.
    const { samples, kinds } = fewPerKind(starts(), pipelineKind(t, 'create'), 1);
    t.ok(kinds.has('applied') && kinds.size > 25, `${kinds.size} kinds of outcome in ${POOL} starts: ${samples.length} × 3 runs`);
    const results = await pool(
      samples.map(({ sample: [file, annotations] }, i) => async () => {
        const b = runtimeBundle(path.join(root, `s${i}`), file, annotations);
        const original = fs.readFileSync(b.config, 'utf8');
        // Podman's precreate gets the config on stdin (the image env carries a canary too).
        const pre = await precreateRun(b, original.replace('"PATH=/bin"', `"PATH=/bin", "IMG=${canary}"`));
        const shim = await frontCreate(b);
        const after = fs.readFileSync(b.config, 'utf8');
        const hook = await hookRun(b);
        return {
          pre,
          shim,
          hook,
          ran: fs.existsSync(b.ran),
          changed: after !== original,
          runcLog: readIf(b.runcLog),
          pino: readIf(b.pinoLog),
          temps: tempFiles(b.bundle).length,
        };
      }),
    );
    const leaked = results.filter((r) =>
      [r.shim.out, r.shim.err, r.hook.out, r.hook.err, r.pre.err, r.pre.code === 0 ? '' : r.pre.out, r.runcLog, r.pino]
        .join('\n')
        .includes(TAG),
    );
    t.equal(leaked.length, 0, `no canary in stdout, stderr, runc --log or the debug log of ${results.length * 3} runs`);
    t.ok(
      results.every((r) => (r.shim.code === 0) === r.ran),
      'the real runtime runs exactly when the shim succeeds',
    );
    t.ok(
      results
        .filter((r) => r.shim.code !== 0)
        .every((r) => r.shim.code === 1 && /^envhook: [^\n]+\n$/.test(r.shim.err) && /"level":"error"/.test(r.runcLog) && !r.changed),
      'a failed create: one line, status 1, an error line in runc --log, config.json unchanged',
    );
    t.ok(
      results.filter((r) => r.pre.code !== 0).every((r) => r.pre.code === 1 && r.pre.out === '' && /^envhook: [^\n]+\n$/.test(r.pre.err)),
      'a failed precreate: nothing on stdout, one line',
    );
    t.ok(
      results.every((r) => r.temps === 0),
      'no temporary file left',
    );
    t.ok(
      results.filter((r) => r.shim.code === 0).every((r) => r.hook.code === 0),
      'the hook accepts every create the shim prepared',
    );
    t.comment(
      `shim: ${
        results.filter((r) => r.shim.code === 0).length
      } ok / ${results.filter((r) => r.shim.code !== 0).length} failed; precreate: ${
        results.filter((r) => r.pre.code === 0).length
      } ok; hook: ${results.filter((r) => r.hook.code === 0).length} ok`,
    );
  },
);
