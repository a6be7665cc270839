// What envhook prints after `envhook: `: its own messages on one line, never a foreign message.
import t from 'tap';
import { describeError, EnvFileError, EnvhookError, serializeCause } from '../src/errors.ts';

t.test('describeError', async (t) => {
  t.equal(describeError(new EnvhookError('volume "v" not found')), 'volume "v" not found');
  t.equal(describeError(new EnvhookError('a\nb\r\nc\u001b[31m\u2028')), 'a b c\\u001b[31m\\u2028', 'one line, control characters escaped');
  const foreign = Object.assign(new Error('secret value here'), { code: 'EACCES' });
  t.equal(describeError(foreign), 'internal error (Error EACCES)');
  t.equal(describeError(new SyntaxError('Unexpected token s in "secret"')), 'internal error (SyntaxError)');
  t.equal(describeError('text'), 'internal error');
});

t.test('EnvFileError and serializeCause', async (t) => {
  const e = new EnvFileError(3, 'unclosed quote');
  t.equal(e.message, 'line 3: unclosed quote');
  t.equal(new EnvFileError(0, 'file too large').message, 'file too large');
  t.ok(e instanceof EnvhookError);
  const chain = new EnvhookError('outer', {
    cause: Object.assign(new Error('foreign text'), { code: 'ENOENT', syscall: 'open', path: '/p' }),
  });
  t.same(serializeCause(chain), {
    name: 'EnvhookError',
    message: 'outer',
    cause: { name: 'Error', code: 'ENOENT', syscall: 'open', path: '/p' },
  });
  t.equal(serializeCause('x'), undefined);
});
