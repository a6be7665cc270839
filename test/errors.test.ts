// What envhook prints after `envhook: `: its own messages on one line, never a foreign message.
import t from 'tap';
import { describeError, EnvFileError, EnvhookError, errnoReason, oneLine, serializeCause } from '../src/errors.ts';

t.test('describeError', async (t) => {
  t.equal(describeError(new EnvhookError('volume "v" not found')), 'volume "v" not found');
  t.equal(describeError(new EnvhookError('a\nb\r\nc\u001b[31m\u2028')), 'a b c\\u001b[31m\\u2028', 'one line, control characters escaped');
  const foreign = Object.assign(new Error('secret value here'), { code: 'EACCES' });
  // A system error: its call and path, the code in words; as root, no advice to become root.
  const root = process.geteuid?.() === 0;
  t.equal(
    describeError(foreign),
    root ? 'system call: permission denied (EACCES)' : 'system call: permission denied (EACCES): run as root',
  );
  const open = Object.assign(new Error('secret'), { code: 'EISDIR', syscall: 'open', path: '/etc/envhook' });
  t.equal(describeError(open), 'open /etc/envhook: is a directory, not a file (EISDIR)');
  const spawn = Object.assign(new Error('spawnSync /x ENOENT'), { code: 'ENOENT', syscall: 'spawnSync /x', path: '/x' });
  t.equal(describeError(spawn), 'cannot run /x: no such file or directory (ENOENT)');
  t.equal(describeError(Object.assign(new Error('x'), { code: 'EWHATEVER' })), 'system call: failed (EWHATEVER)');
  t.equal(
    describeError(Object.assign(new TypeError('x'), { code: 'ERR_INVALID_ARG_TYPE' })),
    'internal error (TypeError ERR_INVALID_ARG_TYPE)',
  );
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

t.test('oneLine: bidi controls and every other format character (Cf) escaped, as controls and separators are', async (t) => {
  // U+202E RLO, U+2066-2069 isolates, U+200E/F marks, U+061C ALM, U+200B ZWSP, U+FEFF BOM, U+00AD soft hyphen.
  t.equal(
    oneLine('a\u202eb\u2066c\u2067d\u2068e\u2069f\u200eg\u200fh\u061ci\u200bj\ufeffk\u00adl'),
    'a\\u202eb\\u2066c\\u2067d\\u2068e\\u2069f\\u200eg\\u200fh\\u061ci\\u200bj\\ufeffk\\u00adl',
  );
  // Beyond the BMP (language tags, musical formatting): written with braces, never half a pair.
  t.equal(oneLine('x\u{e0041}y\u{1d173}'), 'x\\u{e0041}y\\u{1d173}');
  t.equal(oneLine('lone \ud800 surrogate'), 'lone \\ud800 surrogate');
  t.equal(oneLine('\u0007\u009b\u2028\u2029'), '\\u0007\\u009b\\u2028\\u2029', 'C0, C1 and the separators as before');
  t.equal(oneLine('plain ascii, é, 漢字, emoji 🙂'), 'plain ascii, é, 漢字, emoji 🙂', 'printable text untouched');
});

t.test('serializeCause: the message and path of the log escaped too', async (t) => {
  const err = new EnvhookError('volume "v": file "a\u202egpj.exe": not found', {
    cause: Object.assign(new Error('x'), { code: 'ENOENT', path: '/proc/self/fd/3/a\u2066b' }),
  });
  t.same(serializeCause(err), {
    name: 'EnvhookError',
    message: 'volume "v": file "a\\u202egpj.exe": not found',
    cause: { name: 'Error', code: 'ENOENT', path: '/proc/self/fd/3/a\\u2066b' },
  });
});

t.test('errnoReason: words and the code; not root where root is needed: run as root', async (t) => {
  t.equal(errnoReason(Object.assign(new Error(), { code: 'ENOENT' })), 'no such file or directory (ENOENT)');
  t.equal(
    errnoReason(Object.assign(new Error(), { code: 'EADDRINUSE' })),
    'address already in use (EADDRINUSE): another process listens there; choose a free port or stop that process',
  );
  t.equal(errnoReason(new Error('no code')), 'failed');
  t.equal(errnoReason(undefined), 'failed');
  const eacces = Object.assign(new Error(), { code: 'EACCES' });
  const was = process.geteuid;
  t.teardown(() => void (process.geteuid = was));
  process.geteuid = () => 1000;
  t.equal(errnoReason(eacces), 'permission denied (EACCES): run as root');
  t.equal(errnoReason(Object.assign(new Error(), { code: 'EPERM' })), 'operation not permitted (EPERM): run as root');
  process.geteuid = () => 0;
  t.equal(errnoReason(eacces), 'permission denied (EACCES)', 'root already: the code, no advice');
});
