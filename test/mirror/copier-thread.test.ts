// The copier's thread on its own: each request answered with its id (and what the copies hold after it), our errors as their message,
// a foreign error as its code, call and path only (never its message, which may quote a file).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ThreadReply, ThreadRequest } from '../../src/mirror/copier-messages.ts';
import { atomicWrite } from '../../scripts/kubelet-pod.ts';

t.test('requests in, replies out: a copy, a removal, our error and a foreign one', async (t) => {
  const dir = t.testdir({});
  const kubelet = path.join(dir, 'kubelet');
  atomicWrite(kubelet, { key: 'CANARY-thread-5b2e' });
  const runDir = path.join(dir, 'run');
  const thread = new Worker(new URL('../../src/mirror/copier-thread.ts', import.meta.url), { execArgv: [] });
  t.teardown(() => thread.terminate());
  const ask = (m: ThreadRequest) =>
    new Promise<ThreadReply>((resolve) => {
      thread.once('message', resolve);
      thread.postMessage(m);
    });
  const place = { runDir, podUid: 'pod-1', volume: 'keys' };
  const owners = { defaultOwner: { hostUid: 1000 }, items: new Map() };
  const copied = await ask({ id: 1, kind: 'copy', job: { place, kubeletDir: kubelet, owners } });
  t.match(copied, { id: 1, ok: true, value: { files: 1, created: true, owned: ['key'] } });
  const none = { bytes: 0, files: 0, copies: 0 };
  t.same(copied.held, { bytes: 'CANARY-thread-5b2e'.length, files: 1, copies: 1 }, 'with what the copies hold after the job');
  t.equal(fs.statSync(path.join(runDir, 'volumes/pod-1/keys/key')).uid, 1000);
  t.same(await ask({ id: 2, kind: 'remove-copy', place }), { id: 2, ok: true, value: true, held: none });
  t.notOk(fs.existsSync(path.join(runDir, 'volumes/pod-1/keys')));
  t.same(
    await ask({ id: 3, kind: 'remove-pod', runDir, podUid: 'pod-1' }),
    { id: 3, ok: true, value: false, held: none },
    "the pod's last copy took its directory with it",
  );
  t.same(await ask({ id: 4, kind: 'remove-pod', runDir, podUid: '../x' }), {
    id: 4,
    ok: false,
    error: { ours: true, message: 'pod UID "../x" cannot name an owned copy' },
    held: none,
  });
  // A foreign error: the run directory is a file, so creating below it fails with ENOTDIR.
  fs.writeFileSync(path.join(dir, 'file'), '');
  const foreign = await ask({
    id: 5,
    kind: 'copy',
    job: { place: { ...place, runDir: path.join(dir, 'file', 'run') }, kubeletDir: kubelet, owners },
  });
  t.match(foreign, { id: 5, ok: false, error: { ours: false, code: 'ENOTDIR', syscall: 'lstat' } }, 'its code and call, no message');
  t.notOk('message' in (foreign as { error: object }).error);
  t.notMatch(JSON.stringify(foreign), 'CANARY');
});
