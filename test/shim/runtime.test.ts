// Which real runtime the front will exec: a path as given, or the name on PATH, never a front.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { resolveRuntime } from '../../src/shim/runtime.ts';
import { FRONT_MARKER } from '../../src/oci/runtime-binary.ts';
import { EnvhookError } from '../../src/errors.ts';

function exe(file: string, text = '#!/bin/sh\nexit 0\n'): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text, { mode: 0o755 });
  return file;
}

t.test('PATH order, skipping fronts and files that are not executable', async (t) => {
  const dir = t.testdir({});
  const front = exe(path.join(dir, 'a/runc'), `#!/bin/sh\n# ${FRONT_MARKER} yes\n`);
  fs.mkdirSync(path.join(dir, 'b'));
  fs.writeFileSync(path.join(dir, 'b/runc'), 'x', { mode: 0o644 });
  const real = exe(path.join(dir, 'c/runc'));
  t.equal(resolveRuntime('runc', { PATH: [path.dirname(front), path.join(dir, 'b'), path.dirname(real)].join(':') }), real);
  t.throws(
    () => resolveRuntime('runc', { PATH: path.dirname(front) }),
    new EnvhookError('runtime "runc" not found on PATH (other than an envhook front)'),
  );
});

t.test('a path: executable, not a front, not the front that called us', async (t) => {
  const dir = t.testdir({});
  const real = exe(path.join(dir, 'runc'));
  t.equal(resolveRuntime(real, {}), real);
  t.throws(() => resolveRuntime(dir, {}), new EnvhookError(`runtime ${dir} is not an executable file`));
  t.throws(
    () =>
      resolveRuntime(real, {
        ENVHOOK_FRONT: real,
      }),
    { message: new RegExp(`^runtime ${real} is an envhook front, not a real runtime`) },
  );
  const marked = exe(path.join(dir, 'marked'), `#!/bin/sh\n# ${FRONT_MARKER}\n`);
  t.throws(() => resolveRuntime(marked, {}), { message: /is an envhook front/ });
});
