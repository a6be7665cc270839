// Env files decoded once across starts: a file reached the confined way with the identity, size
// and times of one decoded before is not read again; any change of them reads it again; a file
// changed within SETTLED_MS of its read, one that grew while read, and the oldest past the
// bounds are not remembered. Through EnvFiles on real files, and on fstats directly.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { EnvFiles } from '../../src/resolve/files.ts';
import { parseEnvFile } from '../../src/envfile/envfile.ts';
import { rememberFile, unchangedFile } from '../../src/resolve/file-memo.ts';
import type { VolumeLocator } from '../../src/k8s/volumes.ts';
import { sleep } from '../helpers/wait.ts';

const CANARY = 'CANARY-memo-7e2a';

t.test('through EnvFiles: a settled file is parsed once across starts; a rewrite of the same size is read again', async (t) => {
  const dir = t.testdir({ 'a.env': `A='${CANARY}-1'\n` });
  const file = path.join(dir, 'a.env');
  const volumes: VolumeLocator = { find: () => dir, envSource: () => ({ dir, viaData: false }) };
  let parses = 0;
  const start = () => new EnvFiles(volumes, (b) => (parses++, parseEnvFile(b))).read({ volumeName: 'v', path: 'a.env' })!.get('A');
  t.equal(start(), `${CANARY}-1`);
  t.equal(start(), `${CANARY}-1`);
  t.equal(parses, 2, 'a file changed less than 2 s before its read is read at every start');
  await sleep(2100);
  t.equal(start(), `${CANARY}-1`);
  t.equal(start(), `${CANARY}-1`);
  t.equal(start(), `${CANARY}-1`);
  t.equal(parses, 3, 'settled: read and parsed once, then used as decoded');
  fs.writeFileSync(file, `A='${CANARY}-2'\n`); // same size, same inode
  t.equal(start(), `${CANARY}-2`, 'the rewrite is seen at the next start');
  t.equal(parses, 4);
  fs.rmSync(file);
  fs.writeFileSync(file, `A='${CANARY}-3'\n`);
  t.equal(start(), `${CANARY}-3`, 'a new file at the name is read');
});

t.test('fstats: the stamp decides, the settle rule and the bounds hold', async (t) => {
  const dir = t.testdir({ f: 'x'.repeat(10) });
  const st = fs.statSync(path.join(dir, 'f'));
  const later = Math.max(st.ctimeMs, st.mtimeMs) + 3000;
  rememberFile('env', st, 10, 'decoded', later);
  t.equal(unchangedFile('env', st)?.decoded, 'decoded');
  t.equal(unchangedFile('value', st), undefined, 'a whole-file value is another kind');
  t.equal(unchangedFile('env', Object.assign(Object.create(st), { ...st, ctimeMs: st.ctimeMs + 1 })), undefined, 'a new change time');
  t.equal(unchangedFile('env', Object.assign(Object.create(st), { ...st, size: 11 })), undefined, 'another size');

  const fresh = { ...st, ino: st.ino + 1 } as fs.Stats;
  rememberFile('env', fresh, 10, 'fresh', Math.max(st.ctimeMs, st.mtimeMs) + 100);
  t.equal(unchangedFile('env', fresh), undefined, 'changed 0.1 s before the read: not remembered');
  const grew = { ...st, ino: st.ino + 2 } as fs.Stats;
  rememberFile('env', grew, 12, 'grew', later);
  t.equal(unchangedFile('env', grew), undefined, 'read more bytes than its fstat said: not remembered');

  const many = Array.from({ length: 300 }, (_, i) => ({ ...st, ino: st.ino + 10 + i }) as fs.Stats);
  for (const s of many) rememberFile('env', s, 10, s.ino, later);
  t.equal(unchangedFile('env', many[0]!), undefined, 'the oldest dropped past 256 files');
  t.equal(unchangedFile('env', many[299]!)?.decoded, many[299]!.ino);
  const big = Array.from({ length: 5 }, (_, i) => ({ ...st, ino: st.ino + 1000 + i, size: 300_000 }) as fs.Stats);
  for (const s of big) rememberFile('env', s, 300_000, s.ino, later);
  t.equal(unchangedFile('env', big[0]!), undefined, 'the oldest dropped past 1 MiB');
  t.equal(unchangedFile('env', big[4]!)?.decoded, big[4]!.ino);
});
