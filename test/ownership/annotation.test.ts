import t from 'tap';
import { readVolumeOwners } from '../../src/ownership/annotation.ts';
import { VOLUME_OWNERS } from '../../src/k8s/annotation-keys.ts';

const read = (value: unknown) => readVolumeOwners({ [VOLUME_OWNERS]: typeof value === 'string' ? value : JSON.stringify(value) });
const msg = (value: unknown): string => {
  try {
    read(value);
  } catch (err) {
    return (err as Error).message;
  }
  return 'no error';
};
const A = 'annotation "envhook.io/volumeOwners"';

t.test('absent annotation: nothing asked', async (t) => {
  t.equal(readVolumeOwners({}), undefined);
});

t.test('valid entries are normalised', async (t) => {
  t.same(read([{ volume: 'keys', defaultUser: 1000, items: [{ path: 'ssh/./host_rsa_key', user: 0 }] }, { volume: 'mongo' }]), [
    {
      volume: 'keys',
      defaultUser: 1000,
      items: [{ path: 'ssh/./host_rsa_key', names: ['ssh', 'host_rsa_key'], key: 'ssh/host_rsa_key', user: 0 }],
    },
    { volume: 'mongo', defaultUser: undefined, items: [] },
  ]);
  t.same(read([{ volume: 'v', defaultUser: 2147483647 }])?.[0]?.defaultUser, 2147483647, 'the largest UID');
  t.same(read([{ volume: 'v', defaultUser: 0 }])?.[0]?.defaultUser, 0, '0 forces root');
});

t.test('UIDs: integers in [0, 2147483647], exact messages', async (t) => {
  t.equal(msg([{ volume: 'v', defaultUser: -1 }]), `${A}: /0/defaultUser: must be >= 0`);
  t.equal(msg([{ volume: 'v', defaultUser: 1.5 }]), `${A}: /0/defaultUser: must be integer`);
  t.equal(
    msg('[{"volume":"v","defaultUser":1000.0}]'),
    `${A}: /0/defaultUser: must be integer`,
    '1000.0 is not an int64 to Kubernetes either',
  );
  t.equal(msg('[{"volume":"v","defaultUser":1e3}]'), `${A}: /0/defaultUser: must be integer`);
  t.equal(msg([{ volume: 'v', defaultUser: 2147483648 }]), `${A}: /0/defaultUser: must be <= 2147483647`);
  t.equal(msg([{ volume: 'v', defaultUser: '1000' }]), `${A}: /0/defaultUser: must be integer`);
  t.equal(msg([{ volume: 'v', defaultUser: null }]), `${A}: /0/defaultUser: must be integer`);
  t.equal(msg([{ volume: 'v', items: [{ path: 'a', user: -5 }] }]), `${A}: /0/items/0/user: must be >= 0`);
  t.equal(msg([{ volume: 'v', items: [{ path: 'a', user: 4294967296 }] }]), `${A}: /0/items/0/user: must be <= 2147483647`);
  t.equal(msg([{ volume: 'v', items: [{ path: 'a', user: '1001' }] }]), `${A}: /0/items/0/user: must be integer`);
});

t.test('item paths: relative, no .., not reserved', async (t) => {
  const path = (p: string) =>
    msg([
      {
        volume: 'v',
        items: [
          { path: 'ok', user: 1 },
          { path: p, user: 1 },
        ],
      },
    ]);
  t.equal(path('../etc/shadow'), `${A}: /0/items/1/path: path must not contain '..'`);
  t.equal(path('a/../../b'), `${A}: /0/items/1/path: path must not contain '..'`);
  t.equal(path('a/..'), `${A}: /0/items/1/path: path must not contain '..'`);
  t.equal(path('/etc/shadow'), `${A}: /0/items/1/path: path must be relative`);
  t.equal(path('..data/key'), `${A}: /0/items/1/path: path must not start with '..'`);
  t.equal(path('./.'), `${A}: /0/items/1/path: path is empty`);
  t.equal(path('a\0b'), `${A}: /0/items/1/path: path contains a NUL byte`);
  t.equal(path(''), `${A}: /0/items/1/path: must NOT have fewer than 1 characters`);
  t.equal(path('ok'), `${A}: /0/items/1/path: path "ok" is listed more than once`);
  t.equal(path('./ok'), `${A}: /0/items/1/path: path "ok" is listed more than once`);
  t.equal(msg([{ volume: 'v', items: [{ path: 'a..b/..c', user: 1 }] }]), 'no error', 'names merely containing dots are fine');
});

t.test('shape errors name the JSON path', async (t) => {
  t.equal(msg({ volume: 'v' }), `${A}: /: must be array`);
  t.equal(msg([{ defaultUser: 1 }]), `${A}: /0: missing field "volume"`);
  t.equal(msg([{ volume: 'v', owner: 1 }]), `${A}: /0: unknown field "owner"`);
  t.equal(msg([{ volume: 'v', items: [{ path: 'a' }] }]), `${A}: /0/items/0: missing field "user"`);
  t.equal(msg([{ volume: 'v', items: [{ path: 'a', user: 1, mode: 1 }] }]), `${A}: /0/items/0: unknown field "mode"`);
  t.equal(msg([{ volume: 'v' }, { volume: 'v' }]), `${A}: /1/volume: volume "v" is listed more than once`);
});

t.test('bad JSON: a position, never the text', async (t) => {
  const m = msg('[{"volume": "s3cr3t-canary"');
  t.equal(m, `${A} is not valid JSON (at offset 27)`);
  t.notMatch(msg('[{"volume": s3cr3t-canary}]'), /canary/);
});
