// The NRI status file: written atomically into a run directory it creates, read back and checked
// as untrusted input (the reader's errors are one line and never quote the file).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { readStatus, statusPath, writeStatus } from '../../src/nri/status-file.ts';
import { sampleStatus } from '../helpers/nri/status.ts';
import { EnvhookError } from '../../src/errors.ts';

t.test('written into a run directory it creates (0755, file 0600), read back as written', async (t) => {
  const runDir = path.join(t.testdir({}), 'run', 'envhook');
  t.equal(statusPath(runDir), path.join(runDir, 'nri-status.json'));
  t.equal(readStatus(runDir), undefined, 'no file: undefined');
  const old = process.umask(0o022);
  try {
    writeStatus(runDir, sampleStatus());
  } finally {
    process.umask(old);
  }
  t.equal(fs.statSync(runDir).mode & 0o777, 0o755);
  t.equal(fs.statSync(statusPath(runDir)).mode & 0o777, 0o600, "root's alone");
  t.same(readStatus(runDir), sampleStatus());
  const next = sampleStatus({
    connected: false,
    since: '2026-11-26T10:06:00.000Z',
    lastError: { at: '2026-11-26T10:06:00.000Z', message: 'NRI connection closed' },
  });
  delete next.workerPid;
  writeStatus(runDir, next);
  t.same(readStatus(runDir), next, 'replaced whole');
  const withOwners = sampleStatus({
    owners: { pods: 1, volumes: 2, watches: 3, polled: 0, ownedBeforeSwap: 10, ownedAfterSwap: 1, refusedByKernel: 0, refusedByBound: 0 },
  });
  writeStatus(runDir, withOwners);
  t.same(readStatus(runDir), withOwners, 'the owner watcher');
  t.same(fs.readdirSync(runDir), ['nri-status.json'], 'no temporary file left');
  // The file an older envhook wrote 0644 (pod and container names for anyone): narrowed at the next write.
  fs.chmodSync(statusPath(runDir), 0o644);
  writeStatus(runDir, next);
  t.equal(fs.statSync(statusPath(runDir)).mode & 0o777, 0o600, 'an older 0644 file narrowed');
  // The admin's fileGroup: 0640 with that group.
  writeStatus(runDir, next, { mode: 0o640, gid: 4 });
  const st = fs.statSync(statusPath(runDir));
  t.same([st.mode & 0o777, st.gid, st.uid], [0o640, 4, 0], 'fileGroup: 0640, its group, root the owner');
});

t.test('a file that is not a status: one line naming the file, never its content', async (t) => {
  const runDir = t.testdir({});
  const file = statusPath(runDir);
  const cases: [string, string | Buffer | null, RegExp][] = [
    ['not JSON', '{"plugin": "CANARY-VALUE', /^status file \S+ is not valid JSON$/],
    ['not UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), /^status file \S+ is not valid JSON$/],
    ['a field of the wrong type', JSON.stringify({ ...sampleStatus(), plugin: 5 }), /^status file \S+: \/plugin: must be string$/],
    ['an unknown field', JSON.stringify({ ...sampleStatus(), CANARY: 'CANARY-VALUE' }), /^status file \S+: \/: unknown field "CANARY"$/],
    [
      'a count missing',
      JSON.stringify({ ...sampleStatus(), counts: { adjusted: 1 } }),
      /^status file \S+: \/counts: missing field "registrations"$/,
    ],
    ['another version', JSON.stringify({ ...sampleStatus(), version: 2 }), /^status file \S+: \/version: must be equal to constant$/],
    [
      'a time that is not one',
      JSON.stringify({ ...sampleStatus(), since: 'CANARY-VALUE' }),
      /^status file \S+: \/since: not in the form allowed here$/,
    ],
    ['too large', 'x'.repeat(64 * 1024 + 1), /^status file \S+ is larger than 65536 bytes$/],
    ['a directory', null, /^\S+: not a regular file$/],
  ];
  for (const [name, content, message] of cases) {
    fs.rmSync(file, { recursive: true, force: true });
    if (content === null) fs.mkdirSync(file);
    else fs.writeFileSync(file, content);
    const err = t.throws(() => readStatus(runDir), name) as unknown as Error;
    t.ok(err instanceof EnvhookError, `${name}: an EnvhookError`);
    t.match(err.message, message, name);
    t.notMatch(err.message, 'CANARY-VALUE', `${name}: no content`);
    t.notMatch(err.message, '\n', `${name}: one line`);
  }
});
