// The run directory's file system under --root: a real tmpfs mounted in the node's root, and the
// test directory's own file system (a disk here), the run directory made or not yet.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { readNode } from '../../src/doctor/node.ts';
import { runDirCheck } from '../../src/doctor/run-dir-check.ts';
import { runDirStorage } from '../../src/watch/run-dir-memory.ts';

const check = (root: string, env: NodeJS.ProcessEnv = {}) => runDirCheck(readNode({ root, prefix: '/usr/local/lib/envhook' }, env));
const TODO =
  'mount a tmpfs at /run/envhook, or set runDir in /etc/envhook/config.json to a directory on one (runDirOnDisk "refuse" makes envhook refuse to write copies there)';

t.test("a tmpfs at the node's /run: ok, made or not yet", async (t) => {
  const root = t.testdir({});
  const run = path.join(root, 'run');
  fs.mkdirSync(run);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', run]);
  try {
    t.same(check(root), { check: 'run-dir', state: 'ok', what: '/run/envhook will be made on tmpfs (/run): owned copies stay in memory' });
    fs.mkdirSync(path.join(run, 'envhook'));
    t.same(check(root), { check: 'run-dir', state: 'ok', what: '/run/envhook is on tmpfs: owned copies stay in memory' });
  } finally {
    execFileSync('umount', ['-l', run]);
  }
});

t.test(
  'a disk: a problem with what to do',
  { skip: runDirStorage(process.cwd()).inMemory ? 'the checkout is on tmpfs' : false },
  async (t) => {
    const root = t.testdir({ run: { envhook: {} } });
    const type = runDirStorage(root).type;
    t.same(check(root), {
      check: 'run-dir',
      state: 'problem',
      what: `run directory /run/envhook is on ${type}, not tmpfs: owned copies of secret volumes are written to disk`,
      todo: TODO,
    });
    fs.rmSync(path.join(root, 'run'), { recursive: true });
    t.same(check(root), {
      check: 'run-dir',
      state: 'problem',
      what: `run directory /run/envhook would be made on ${type} (/), not tmpfs: owned copies of secret volumes would be written to disk`,
      todo: TODO,
    });
    t.match(
      check(root, { ENVHOOK_RUN_DIR: '/var/envhook' }),
      { state: 'problem', what: /^run directory \/var\/envhook would be made on .* \(\/\)/ },
      'the runDir in force',
    );
  },
);
