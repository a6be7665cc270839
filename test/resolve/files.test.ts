// Env files of one start: read and parsed once per (volume, path), optional only for a missing
// file, errors with volume, path and line, never a byte of the file.
import t from 'tap';
import { EnvFiles, describeFile } from '../../src/resolve/files.ts';
import { parseEnvFile } from '../../src/envfile/index.ts';
import { EnvhookError } from '../../src/errors.ts';
import type { VolumeLocator } from '../../src/k8s/volumes.ts';

const CANARY = 'CANARY-files-9d';

t.test('one read and parse per file; optional covers a missing file only', async (t) => {
  const dir = t.testdir({ 'a.env': `A='${CANARY}'\n`, 'bad.env': `A='${CANARY}\n`, sub: {} });
  let parses = 0;
  const volumes: VolumeLocator = { find: (name) => (name === 'v' ? dir : (() => { throw new EnvhookError(`volume "${name}" not found`); })()) };
  const files = new EnvFiles(volumes, (b) => (parses++, parseEnvFile(b)));
  t.same([...files.read({ volumeName: 'v', path: 'a.env' })!], [['A', CANARY]]);
  files.read({ volumeName: 'v', path: './a.env' });
  files.read({ volumeName: 'v', path: 'a.env', optional: true });
  t.equal(parses, 2, 'the same (volume, path) is parsed once');
  t.equal(files.read({ volumeName: 'v', path: 'missing.env', optional: true }), undefined);
  t.throws(() => files.read({ volumeName: 'v', path: 'missing.env' }), new EnvhookError('volume "v": file "missing.env": not found'));
  t.throws(() => files.read({ volumeName: 'w', path: 'a.env', optional: true }), new EnvhookError('volume "w" not found'), 'optional does not cover a missing volume');
  t.throws(() => files.read({ volumeName: 'v', path: 'sub', optional: true }), new EnvhookError('volume "v": file "sub": is a directory'));
  const err = t.throws(() => files.read({ volumeName: 'v', path: 'bad.env' })) as Error;
  t.match(err.message, /^volume "v": file "bad\.env": line 1: /);
  t.notMatch(err.message, CANARY);
});

t.test('describeFile quotes names as JSON', async (t) => {
  t.equal(describeFile({ volumeName: 'v', path: 'a "b".env' }), 'volume "v": file "a \\"b\\".env"');
});
