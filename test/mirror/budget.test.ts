// The budgets of owned copies, checked for a whole start before its first write: one pod's
// bytes, files and volumes, the node's bytes across pods, the run directory's free space (a
// real tmpfs). Each refusal is its exact line, and a refused start writes nothing.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_BUDGETS, NODE_BYTES_CAP, nodeBytesDefault, size, type CopyBudgets } from '../../src/mirror/budget.ts';
import { runStartJob } from '../../src/mirror/copy.ts';
import { startOf, tinyTmpfs } from '../helpers/mirror/start.ts';

const CANARY = 'CANARY-budget-5be1';
const budgets = (b: Partial<CopyBudgets>): CopyBudgets => ({ ...DEFAULT_BUDGETS, nodeBytes: 1 << 30, ...b });
const bytes = (n: number) => CANARY + 'x'.repeat(n - CANARY.length);
const pod = (runDir: string, uid: string) => path.join(runDir, 'volumes', uid);

t.test("one pod's bytes: the volume that passes the budget named, nothing of the start written", async (t) => {
  const dir = t.testdir({});
  const runDir = path.join(dir, 'run');
  const start = startOf(t, dir, runDir, 'pod-1', { a: { k: bytes(60) }, b: { k: bytes(60) } }, budgets({ podBytes: 100 }));
  t.throws(() => runStartJob(start), {
    message:
      'volume "b" of pod pod-1: the pod\'s owned copies would hold 120 bytes, over the pod\'s budget of 100 bytes (podCopyBytes): ' +
      'give the pod smaller volumes with owners, or raise podCopyBytes in the settings file (ENVHOOK_POD_COPY_BYTES)',
  });
  t.notOk(fs.existsSync(pod(runDir, 'pod-1')), 'no copy made');
});

t.test("one pod's files, counted with the copies it has already", async (t) => {
  const dir = t.testdir({});
  const runDir = path.join(dir, 'run');
  runStartJob(startOf(t, dir, runDir, 'pod-1', { a: { k1: 'A', k2: 'B' } }, budgets({ podFiles: 3 })));
  const second = startOf(t, dir, runDir, 'pod-1', { b: { k1: 'C', k2: 'D' } }, budgets({ podFiles: 3 }));
  t.throws(() => runStartJob(second), {
    message:
      'volume "b" of pod pod-1: the pod\'s owned copies would hold 4 files, over the pod\'s budget of 3 files (podCopyFiles): ' +
      'give the pod fewer files in its volumes with owners, or raise podCopyFiles in the settings file (ENVHOOK_POD_COPY_FILES)',
  });
  t.same(fs.readdirSync(pod(runDir, 'pod-1')), ['a'], "the earlier start's copy stays, the refused one made none");
  // The same volume again (another container's start) replaces its own count: within the budget.
  t.equal(runStartJob(startOf(t, dir, runDir, 'pod-1', { a: { k1: 'A', k2: 'B', k3: 'C' } }, budgets({ podFiles: 3 })))[0]!.files, 3);
});

t.test("one pod's volumes", async (t) => {
  const dir = t.testdir({});
  const runDir = path.join(dir, 'run');
  const start = startOf(t, dir, runDir, 'pod-1', { a: { k: 'A' }, b: { k: 'B' }, c: { k: 'C' } }, budgets({ podVolumes: 2 }));
  t.throws(() => runStartJob(start), {
    message:
      'volume "c" of pod pod-1: the pod would have owned copies of 3 volumes, over the pod\'s budget of 2 (podCopyVolumes): ' +
      'give the pod fewer volumes with owners, or raise podCopyVolumes in the settings file (ENVHOOK_POD_COPY_VOLUMES)',
  });
  t.notOk(fs.existsSync(pod(runDir, 'pod-1')));
});

t.test("the node's bytes, across two pods", async (t) => {
  const dir = t.testdir({});
  const runDir = path.join(dir, 'run');
  runStartJob(startOf(t, dir, runDir, 'pod-1', { a: { k: bytes(600) } }, budgets({ nodeBytes: 1000 })));
  const second = startOf(t, dir, runDir, 'pod-2', { a: { k: bytes(500) } }, budgets({ nodeBytes: 1000 }));
  t.throws(() => runStartJob(second), {
    message:
      'volume "a" of pod pod-2: the node\'s owned copies would hold 1.07 KiB, over the node\'s budget of 1000 bytes (nodeCopyBytes): ' +
      'the node holds too many owned copies already; raise nodeCopyBytes in the settings file (ENVHOOK_NODE_COPY_BYTES) if its run directory has room',
  });
  t.notOk(fs.existsSync(pod(runDir, 'pod-2')));
  fs.rmSync(pod(runDir, 'pod-1'), { recursive: true });
  t.equal(runStartJob(second)[0]!.bytes, 500, "once the first pod's copies are gone, the second pod's start fits");
});

t.test("the node's budget by default: a quarter of the run directory's file system, at most 256 MiB", async (t) => {
  const fsOf = (blocks: number) => ({ bsize: 4096, blocks }) as fs.StatsFs;
  t.equal(nodeBytesDefault(fsOf(25_600)), 25 * 1024 * 1024, 'a 100 MiB tmpfs: 25 MiB');
  t.equal(nodeBytesDefault(fsOf(1 << 20)), NODE_BYTES_CAP, 'a 4 GiB tmpfs: 256 MiB');
  t.same([size(12), size(1536), size(32 << 20)], ['12 bytes', '1.5 KiB', '32 MiB']);
});

t.test('the free space of the run directory, for the whole start, before its first write (a 64 KiB tmpfs)', async (t) => {
  const dir = t.testdir({});
  const runDir = tinyTmpfs(t, '64k');
  const start = startOf(t, dir, runDir, 'pod-1', { a: { k: bytes(40_000) }, b: { k: bytes(40_000) } }, budgets({}));
  const err = t.throws(() => runStartJob(start)) as Error;
  t.match(
    err.message,
    new RegExp(
      `^volume "a" of pod pod-1: the run directory ${runDir} has [0-9.]+ KiB free, the pod's owned copies need 80 KiB: ` +
        'free space there \\(or mount a larger tmpfs\\), or give the pod smaller volumes with owners$',
    ),
  );
  t.same(fs.readdirSync(runDir), [], 'nothing written');
  t.notMatch(err.message, CANARY);
});
