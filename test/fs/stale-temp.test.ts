// Temporary files a crashed atomic write left: removed by the next write of the same file when
// their writer is dead; a live writer's, another PID namespace's and another file's are kept.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { removeStaleTemps, tempName } from '../../src/fs/stale-temp.ts';
import { atomicWrite } from '../../src/fs/atomic-write.ts';

const CANARY = 'canary-resolved-value-5e1d';
const NS = /^pid:\[(\d+)\]$/.exec(fs.readlinkSync('/proc/self/ns/pid'))![1]!;

/** The pid of a process that has exited (and was reaped). */
function deadPid(): number {
  const r = spawnSync('true');
  return r.pid!;
}

t.test('the temporary name: pid, PID namespace, clock', async (t) => {
  t.equal(tempName('config.json', 'abc'), `.config.json.envhook-${process.pid}-${NS}-abc`);
});

t.test('a dead writer’s temporary files of the file are removed; every other file stays', async (t) => {
  const dead = deadPid();
  const live = spawn('sleep', ['30']);
  t.teardown(() => live.kill());
  const stale = [
    `.config.json.envhook-${dead}-${NS}-1x2y`,
    `.config.json.envhook-${dead}-zz`,
    `.config.json.envhook-${process.pid}-${NS}-0`,
  ];
  const kept = [
    'config.json',
    `.config.json.envhook-${live.pid}-${NS}-1x2y`, // a concurrent writer, alive
    `.config.json.envhook-${dead}-1-1x2y`, // another PID namespace: its pid means nothing here
    `.other.json.envhook-${dead}-${NS}-1x2y`, // another file's
    `.config.json.envhook-notapid`,
  ];
  const dir = t.testdir(Object.fromEntries([...stale, ...kept].map((n) => [n, CANARY])));
  removeStaleTemps(dir, 'config.json');
  t.same(fs.readdirSync(dir).sort(), [...kept].sort());
});

t.test('the next atomic write removes what a crashed one left (config.json with its values)', async (t) => {
  const dead = deadPid();
  const leftover = `.config.json.envhook-${dead}-${NS}-3f`;
  const dir = t.testdir({ 'config.json': '{}', [leftover]: `{"process":{"env":["SECRET=${CANARY}"]}}` });
  atomicWrite(path.join(dir, 'config.json'), '{"new":1}');
  t.same(fs.readdirSync(dir), ['config.json']);
  t.equal(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'), '{"new":1}');
});

t.test('a leftover directory of that name, or a directory that cannot be listed: the write goes on', async (t) => {
  const dead = deadPid();
  const odd = `.f.envhook-${dead}-${NS}-1`;
  const dir = t.testdir({ [odd]: {} });
  atomicWrite(path.join(dir, 'f'), 'x');
  t.same(fs.readdirSync(dir).sort(), [odd, 'f'].sort(), 'a directory is not removed');
  t.doesNotThrow(() => removeStaleTemps(path.join(dir, 'missing'), 'f'));
});
