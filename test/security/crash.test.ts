// Crash safety (docs/design.md#the-spec-file): config.json is replaced atomically, so a kill -9 at any moment leaves
// the old or the new file, never a torn one. Two harnesses: SIGKILL at each step of the atomic
// write (test-only fault switch), and SIGKILL at random moments of a real run.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { NODE } from '../helpers/bundle.ts';
import { untapped } from '../helpers/untapped.ts';
import { COMPILE_CACHE_ENV } from '../helpers/compile-cache.ts';
import { CLI, FRONT, fastTempDir, pool, runtimeBundle, tempFiles } from './helpers.ts';

// Hundreds of processes: a busy 2-core machine can take longer than the default 120 s.
t.setTimeout(300_000);

const CHILD = path.join(import.meta.dirname, 'fixtures/flush-child.ts');
const STEPS = ['opened', 'written', 'synced', 'renamed', 'dir-synced'] as const;

/** A config.json big enough (about 1 MiB) that the write and fsync take a measurable time. */
function bigSpec(): string {
  const annotations: Record<string, string> = {};
  for (let i = 0; i < 64; i++) annotations[`vendor.example/blob-${i}`] = 'x'.repeat(16 * 1024);
  const spec = {
    ociVersion: '1.0.2',
    process: { args: ['sh'], env: ['PATH=/bin'] },
    root: { path: 'rootfs' },
    'x-big': 18446744073709551615n.toString(),
    annotations,
  };
  return JSON.stringify(spec, null, '\t').replace('"18446744073709551615"', '18446744073709551615');
}

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  ms: number;
}

/**
 * Runs the child; kills it `killAfterMs` after its start, or, with `afterMark`, that long after
 * it wrote "flush" on stderr (the moment the atomic write begins). `flushMs`: mark to exit.
 */
function run(args: string[], killAfterMs?: number, afterMark = false): Promise<Outcome & { flushMs: number | undefined }> {
  return new Promise((resolve) => {
    const start = Date.now();
    let marked: number | undefined;
    // The flush child is TypeScript: Node's compile cache spares each start stripping and compiling it again.
    const env = args[0] === CHILD ? { ...process.env, ...COMPILE_CACHE_ENV } : process.env;
    const child = spawn(...untapped(NODE, args), { stdio: ['ignore', 'ignore', 'pipe'], env });
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      if (killAfterMs !== undefined) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    };
    if (!afterMark) arm();
    child.stderr!.on('data', (d: Buffer) => {
      if (marked === undefined && d.toString().includes('flush')) {
        marked = Date.now();
        if (afterMark) arm();
      }
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const end = Date.now();
      resolve({ code, signal, ms: end - start, flushMs: marked === undefined ? undefined : end - marked });
    });
  });
}

/** The content a normal run writes, and that a normal run leaves no temporary file. */
async function expectedNew(t: Test, root: string, original: string, args: (bundle: string) => string[]): Promise<string> {
  const bundle = path.join(root, 'reference');
  fs.mkdirSync(bundle);
  fs.writeFileSync(path.join(bundle, 'config.json'), original);
  const r = await run(args(bundle));
  t.equal(r.code, 0, 'a normal run succeeds');
  t.same(tempFiles(bundle), [], 'no temporary file after a normal run');
  const text = fs.readFileSync(path.join(bundle, 'config.json'), 'utf8');
  t.not(text, original, 'a normal run changes config.json');
  return text;
}

type State = 'old' | 'new' | 'torn';
function stateOf(bundle: string, original: string, updated: string): State {
  const text = fs.readFileSync(path.join(bundle, 'config.json'), 'utf8');
  if (text === original) return 'old';
  if (text === updated) return 'new';
  return 'torn';
}

t.test('SIGKILL at each step of the atomic write', async (t) => {
  const root = t.testdir({});
  const original = bigSpec();
  const updated = await expectedNew(t, root, original, (b) => [CHILD, b]);
  // A kill at a step is the same case each time: two of each (a repeat would show a flaky step).
  const trials = STEPS.flatMap((step) => Array.from({ length: 2 }, (_, i) => ({ step, i })));
  const results = await pool(
    trials.map(({ step, i }) => async () => {
      const bundle = path.join(root, `${step}-${i}`);
      fs.mkdirSync(bundle);
      fs.writeFileSync(path.join(bundle, 'config.json'), original);
      const r = await run([CHILD, bundle, step]);
      return { step, killed: r.signal === 'SIGKILL', state: stateOf(bundle, original, updated), temps: tempFiles(bundle).length };
    }),
  );
  for (const step of STEPS) {
    const mine = results.filter((r) => r.step === step);
    const want: State = step === 'renamed' || step === 'dir-synced' ? 'new' : 'old';
    t.ok(
      mine.every((r) => r.killed),
      `${step}: killed at the step`,
    );
    t.ok(
      mine.every((r) => r.state === want),
      `${step}: config.json is the ${want} file (${mine.map((r) => r.state).join(',')})`,
    );
    t.ok(
      mine.every((r) => r.temps <= 1),
      `${step}: at most the one temporary file of the killed write remains`,
    );
  }
  t.comment(`step trials: ${results.length}, torn: ${results.filter((r) => r.state === 'torn').length}`);
});

t.test('SIGKILL at random moments of the flush child, half of them inside the atomic write (40 trials)', async (t) => {
  const root = t.testdir({});
  const original = bigSpec();
  const args = (b: string) => [CHILD, b];
  const updated = await expectedNew(t, root, original, args);
  // How long a run lives: kills are spread over [0, 1.2 × that].
  const lifetimes: number[] = [];
  const flushTimes: number[] = [];
  for (let i = 0; i < 3; i++) {
    const b = path.join(root, `time-${i}`);
    fs.mkdirSync(b);
    fs.writeFileSync(path.join(b, 'config.json'), original);
    const r = await run(args(b));
    lifetimes.push(r.ms);
    flushTimes.push(r.flushMs ?? 0);
  }
  const life = Math.max(...lifetimes);
  const flush = Math.max(...flushTimes, 1);
  const TRIALS = 40;
  const results = await pool(
    Array.from({ length: TRIALS }, (_, i) => async () => {
      const bundle = path.join(root, `trial-${i}`);
      fs.mkdirSync(bundle);
      fs.writeFileSync(path.join(bundle, 'config.json'), original);
      // Half the kills anywhere in the run, half within the atomic write (after the mark).
      const inWrite = i % 2 === 1;
      const r = await run(args(bundle), Math.random() * (inWrite ? flush : life) * 1.1, inWrite);
      return {
        killed: r.signal === 'SIGKILL',
        ok: r.code === 0,
        state: stateOf(bundle, original, updated),
        temps: tempFiles(bundle).length,
      };
    }),
  );
  const torn = results.filter((r) => r.state === 'torn').length;
  const counts = {
    killed: results.filter((r) => r.killed).length,
    killedMidWrite: results.filter((r) => r.killed && r.temps > 0).length,
    old: results.filter((r) => r.state === 'old').length,
    new: results.filter((r) => r.state === 'new').length,
    torn,
  };
  t.equal(torn, 0, `never torn: ${JSON.stringify(counts)} (run ${life} ms, write ${flush} ms)`);
  t.ok(
    results.every((r) => r.killed || r.ok),
    'every run was killed or succeeded',
  );
  t.ok(
    results.filter((r) => r.ok).every((r) => r.temps === 0),
    'no temporary file after any completed run',
  );
  t.ok(
    results.filter((r) => r.killed && r.state === 'new').every((r) => r.temps === 0),
    'a run killed after its rename leaves no temporary file',
  );
  // How many kills land before the end depends on the machine's load: only require some.
  t.ok(counts.killed > 0, 'trials were really killed');
});

t.test('kill -9 of the real CLI (envhook inject) at random moments (120 trials)', async (t) => {
  const root = fastTempDir('envhook-crash-cli-');
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  // Bundles on the real disk (fsync matters), the env file anywhere.
  const disk = t.testdir({});
  const vol = path.join(root, 'cfg');
  fs.mkdirSync(vol);
  fs.writeFileSync(path.join(vol, 'app.env'), "A='from the file'\nB='two'\n");
  const envAnnotation = JSON.stringify({
    app: [
      { name: 'A', valueFrom: { fileKeyRef: { volumeName: 'cfg', path: 'app.env', key: 'A' } } },
      { name: 'C', value: 'x$(A)' },
    ],
  });
  const original = bigSpec().replace(
    '"annotations": {',
    `"annotations": {\n\t\t"io.kubernetes.cri.container-name": "app",\n\t\t"envhook.io/env": ${JSON.stringify(envAnnotation)},`,
  );
  const args = (b: string) => [CLI, 'inject', '--bundle', b, '--volume', `cfg=${vol}`];
  const updated = await expectedNew(t, disk, original, args);
  t.match(updated, /"A=from the file"/, 'the normal run injected the variable');
  t.match(updated, /18446744073709551615/, 'big integers kept');
  const lifetimes: number[] = [];
  for (let i = 0; i < 3; i++) {
    const b = path.join(disk, `time-${i}`);
    fs.mkdirSync(b);
    fs.writeFileSync(path.join(b, 'config.json'), original);
    lifetimes.push((await run(args(b))).ms);
  }
  const life = Math.max(...lifetimes);
  let est = life;
  const TRIALS = 120;
  const results = await pool(
    Array.from({ length: TRIALS }, (_, i) => async () => {
      const bundle = path.join(disk, `trial-${i}`);
      fs.mkdirSync(bundle);
      fs.writeFileSync(path.join(bundle, 'config.json'), original);
      // Half anywhere in the run, half in its last part, where the flush is; aimed at the run
      // time as it is now (two at a time, machine load), following the runs that completed.
      const delay = i % 2 === 0 ? Math.random() * est * 1.3 : est * (0.6 + Math.random() * 0.6);
      const r = await run(args(bundle), delay);
      if (r.code === 0) est = 0.7 * est + 0.3 * r.ms;
      return {
        killed: r.signal === 'SIGKILL',
        ok: r.code === 0,
        state: stateOf(bundle, original, updated),
        temps: tempFiles(bundle).length,
      };
    }),
  );
  const counts = countTrials(results);
  t.equal(counts.torn, 0, `never torn: ${JSON.stringify(counts)} (run ${life} ms)`);
  t.ok(
    results.every((r) => r.killed || r.ok),
    'every run was killed or succeeded',
  );
  t.ok(
    results.filter((r) => r.ok).every((r) => r.temps === 0),
    'no temporary file after any completed run',
  );
  t.ok(
    results.every((r) => r.state !== 'old' || r.killed),
    'only a killed run leaves the old file',
  );
});

t.test('kill -9 of the runtime shim (front and envhook, the whole process group) at random moments (60 trials)', async (t) => {
  const root = fastTempDir('envhook-crash-shim-');
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const disk = t.testdir({});
  const envAnnotation = JSON.stringify({
    app: [{ name: 'A', valueFrom: { fileKeyRef: { volumeName: 'cfg', path: 'app.env', key: 'A' } } }],
  });
  const make = (name: string) => {
    const b = runtimeBundle(path.join(root, name), "A='from the file'\n", { 'envhook.io/env': envAnnotation });
    // The bundle on the real disk, the big config.json in it.
    const bundle = path.join(disk, name);
    fs.mkdirSync(bundle);
    const spec = JSON.parse(fs.readFileSync(b.config, 'utf8'));
    for (let i = 0; i < 64; i++) spec.annotations[`vendor.example/blob-${i}`] = 'x'.repeat(16 * 1024);
    fs.writeFileSync(path.join(bundle, 'config.json'), JSON.stringify(spec, null, '\t'));
    return { ...b, bundle, config: path.join(bundle, 'config.json') };
  };
  const runGroup = (b: ReturnType<typeof make>, killAfterMs?: number) =>
    new Promise<{ ms: number; killed: boolean; code: number | null }>((resolve) => {
      const start = Date.now();
      const child = spawn(
        ...untapped('/bin/sh', [FRONT, '--log', b.runcLog, '--log-format', 'json', 'create', '--bundle', b.bundle, 'c1']),
        { env: b.env, stdio: 'ignore', detached: true },
      );
      let killed = false;
      const timer =
        killAfterMs === undefined
          ? undefined
          : setTimeout(() => {
              killed = true;
              try {
                process.kill(-child.pid!, 'SIGKILL');
              } catch {
                /* already gone */
              }
            }, killAfterMs);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ ms: Date.now() - start, killed: killed && code === null, code });
      });
    });
  const ref = make('reference');
  const original = fs.readFileSync(ref.config, 'utf8');
  const first = await runGroup(ref);
  t.equal(first.code, 0, 'a normal create succeeds');
  const updated = fs.readFileSync(ref.config, 'utf8');
  t.not(updated, original);
  t.same(tempFiles(ref.bundle), []);
  const lifetimes = [first.ms];
  for (let i = 0; i < 2; i++) lifetimes.push((await runGroup(make(`time-${i}`))).ms);
  const life = Math.max(...lifetimes);
  let est = life;
  const TRIALS = 60;
  const results = await pool(
    Array.from({ length: TRIALS }, (_, i) => async () => {
      const b = make(`trial-${i}`);
      // Aim at the run time as it is now (two at a time, machine load): an estimate that
      // follows the runs that completed.
      const delay = i % 2 === 0 ? Math.random() * est * 1.3 : est * (0.6 + Math.random() * 0.6);
      const r = await runGroup(b, delay);
      if (!r.killed) est = 0.7 * est + 0.3 * r.ms;
      // Each bundle's config names its own pod directory: the reference's texts, re-pathed.
      const mine = (text: string) => text.replaceAll(`${root}/reference/`, `${root}/trial-${i}/`);
      return {
        ...r,
        state: stateOf(b.bundle, mine(original), mine(updated)),
        temps: tempFiles(b.bundle).length,
        ran: fs.existsSync(b.ran),
      };
    }),
  );
  const counts = countTrials(results);
  t.equal(counts.torn, 0, `never torn: ${JSON.stringify(counts)} (create ${life} ms)`);
  t.ok(
    results.filter((r) => !r.killed).every((r) => r.code === 0 && r.temps === 0 && r.ran),
    'every run not killed succeeded, ran the runtime, left no temporary file',
  );
  t.ok(
    results.filter((r) => r.ran).every((r) => r.state === 'new'),
    'the real runtime only ever ran on the new config.json',
  );
});

/** How the trials ended: killed (mid-write when a temporary file was left), and what config.json holds. */
function countTrials(results: readonly { killed: boolean; temps: number; state: string }[]) {
  const n = (f: (r: (typeof results)[number]) => boolean) => results.filter(f).length;
  return {
    killed: n((r) => r.killed),
    killedMidWrite: n((r) => r.killed && r.temps > 0),
    old: n((r) => r.state === 'old'),
    new: n((r) => r.state === 'new'),
    torn: n((r) => r.state === 'torn'),
  };
}
