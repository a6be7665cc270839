// What can fail at start is checked before anything starts: one line each, naming what to fix.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { loadSettings } from '../../../src/settings.ts';
import { checkStart } from '../../../src/nri/supervisor/start-checks.ts';

// No environment and no config file: the flags and the defaults only.
const settings = (flags: Parameters<typeof loadSettings>[0]) => loadSettings(flags, {}, {});

t.test('socket paths too long for a unix socket, named NRI or CRI with their length', async (t) => {
  const dir = t.testdir();
  const long = `/${'s'.repeat(107)}`;
  await t.rejects(checkStart(settings({ nriSocket: long }), dir), {
    message: 'NRI socket path is 108 bytes: a unix socket path has at most 107',
  });
  await t.rejects(checkStart(settings({ criSocket: long }), dir), {
    message: 'CRI socket path is 108 bytes: a unix socket path has at most 107',
  });
  await t.resolves(checkStart(settings({ nriSocket: `/${'s'.repeat(106)}` }), dir), '107 bytes is fine');
});

t.test('the run directory must be usable: one below a file cannot be made', async (t) => {
  const file = path.join(t.testdir(), 'file');
  fs.writeFileSync(file, '');
  const runDir = path.join(file, 'run');
  await t.rejects(checkStart(settings({}), runDir), {
    message: `cannot create run directory ${runDir}: a part of the path is not a directory (ENOTDIR)`,
  });
});
