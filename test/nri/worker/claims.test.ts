// Claims during a hand-over: outside one nothing is touched; during one the first of two
// instances to claim a container answers it, the other does not; claims go when sharing ends;
// a directory that cannot be used answers every container (two answers fail a create the
// kubelet retries; none would start it without its env).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { createLogger, silentLogger } from '../../../src/log.ts';
import { CLAIMS_DIR, createClaims } from '../../../src/nri/worker/claims.ts';

t.test('not sharing: every container answered, no file touched', async (t) => {
  const runDir = t.testdir();
  const c = createClaims(runDir, false, silentLogger);
  t.equal(c.sharing, false);
  t.ok(c.claim('a'));
  t.ok(c.claim('a'), 'the same container again: still this one (nothing recorded)');
  t.notOk(fs.existsSync(path.join(runDir, CLAIMS_DIR)));
});

t.test('sharing: of two instances on one run directory, the first to claim a container answers it', async (t) => {
  const runDir = t.testdir();
  const leaving = createClaims(runDir, false, silentLogger);
  const arriving = createClaims(runDir, true, silentLogger);
  leaving.share(true);
  t.ok(arriving.claim('c1'), 'the arriving one is called first for c1');
  t.notOk(leaving.claim('c1'), 'the leaving one then answers c1 empty');
  t.ok(leaving.claim('c2'), 'the leaving one is called first for c2');
  t.notOk(arriving.claim('c2'));
  t.same(fs.readdirSync(path.join(runDir, CLAIMS_DIR)).sort(), ['c1', 'c2']);
  t.equal(fs.statSync(path.join(runDir, CLAIMS_DIR)).mode & 0o777, 0o700);
  arriving.share(false);
  t.notOk(fs.existsSync(path.join(runDir, CLAIMS_DIR)), 'alone again: the claims removed');
  t.ok(arriving.claim('c1'), 'and every container answered');
});

t.test('an id that is no file name is claimed by its hash', async (t) => {
  const runDir = t.testdir();
  const c = createClaims(runDir, true, silentLogger);
  t.ok(c.claim('../x/y'));
  t.notOk(c.claim('../x/y'));
  const [name] = fs.readdirSync(path.join(runDir, CLAIMS_DIR));
  t.match(name, /^[0-9a-f]{64}$/);
});

t.test('a run directory that cannot hold claims: every container answered, one warning', async (t) => {
  const dir = t.testdir({ run: 'a file, not a directory' });
  const log = path.join(dir, 'log');
  const c = createClaims(path.join(dir, 'run'), true, createLogger(log, 'info'));
  t.ok(c.claim('a'));
  t.ok(c.claim('a'));
  const lines = fs.readFileSync(log, 'utf8').trim().split('\n');
  t.equal(lines.length, 1);
  t.match(lines[0], /"msg":"nri: cannot claim containers during the hand-over: answering every one"/);
});
