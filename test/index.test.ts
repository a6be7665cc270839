// The published bundle (dist/index.cjs, built by npm test) exposes the library API.
import t from 'tap';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);

t.test('dist/index.cjs exports parseEnvFile, EnvFileError and Reason', async (t) => {
  const lib = require('../dist/index.cjs');
  t.same(
    [...lib.parseEnvFile(Buffer.from("A='1'\nB=''\n"))],
    [
      ['A', '1'],
      ['B', ''],
    ],
  );
  const err = t.throws(() => lib.parseEnvFile(Buffer.from("A='1'\nB=x\n"))) as InstanceType<typeof lib.EnvFileError>;
  t.ok(err instanceof lib.EnvFileError);
  t.equal(err.line, 2);
  t.equal(err.reason, lib.Reason.NotQuoted);
  t.equal(err.message, 'line 2: value must be single-quoted');
  t.equal(lib.MAX_FILE_BYTES, 65536);
});
