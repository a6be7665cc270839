import t from 'tap';
import { entryFor, readEnv, readEnvFrom, readServiceLinks, ANNOTATION_LIMIT } from '../../src/k8s/annotations.ts';

const CANARY = 'CANARY-5be1d0-secret';
const msg = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  return 'no error';
};
const env = (v: unknown) => msg(() => readEnv({ 'envhook.io/env': typeof v === 'string' ? v : JSON.stringify(v) }));
const envFrom = (v: unknown) => msg(() => readEnvFrom({ 'envhook.io/envFrom': JSON.stringify(v) }));
const links = (v: unknown) => msg(() => readServiceLinks({ 'envhook.io/serviceLinks': JSON.stringify(v) }));
const fkr = (over: Record<string, unknown> = {}) => ({ volumeName: 'config', path: 'config.env', key: 'K', ...over });

t.test('valid annotations parse', async (t) => {
  t.same(readEnv({}), undefined);
  const value = {
    app: [
      { name: 'A', value: 'x' },
      { name: 'weird name.-1', valueFrom: { fileKeyRef: fkr({ optional: true }) } },
    ],
  };
  t.same(readEnv({ 'envhook.io/env': JSON.stringify(value) }), value);
  t.equal(envFrom({ app: [{ prefix: 'P_', fileRef: { volumeName: 'config', path: 'sub/./a.env', optional: false } }] }), 'no error');
  t.equal(links({ '*': false, app: true }), 'no error');
});

t.test('schema errors name the annotation and the JSON path', async (t) => {
  const E = 'annotation "envhook.io/env"';
  t.equal(env({ app: [{ name: 'A' }] }), `${E}: /app/0: must have exactly one of "value" or "valueFrom"`);
  t.equal(
    env({ app: [{ name: 'A', value: 'x', valueFrom: { fileKeyRef: fkr() } }] }),
    `${E}: /app/0: must have exactly one of "value" or "valueFrom"`,
  );
  t.equal(env({ app: [{ value: 'x' }] }), `${E}: /app/0: missing field "name"`);
  t.equal(
    env({ app: [{ name: '', value: 'x' }] }),
    `${E}: /app/0/name: must NOT have fewer than 1 characters (and 1 more: envhook lint lists them)`,
  );
  t.equal(env({ app: [{ name: 'A=B', value: 'x' }] }), `${E}: /app/0/name: must be printable ASCII without '='`);
  t.equal(env({ app: [{ name: 'A\u00e9', value: 'x' }] }), `${E}: /app/0/name: must be printable ASCII without '='`);
  t.equal(env({ app: [{ name: 'A', value: 1 }] }), `${E}: /app/0/value: must be string`);
  t.equal(env({ app: [{ name: 'A', value: 'a\u0000b' }] }), `${E}: /app/0/value: must not contain a NUL byte`);
  t.equal(env({ app: [{ name: 'A', value: 'x', extra: 1 }] }), `${E}: /app/0: unknown field "extra"`);
  // lint's line: the unknown field (with the nearest field the object lacks), then how many more
  t.equal(
    env({ app: [{ name: 'A', vaule: 'x' }] }),
    `${E}: /app/0: unknown field "vaule" (did you mean "value"?) (and 1 more: envhook lint lists them)`,
  );
  t.equal(env({ app: [{ name: 'A', value: 'x', vaule: 'x' }] }), `${E}: /app/0: unknown field "vaule"`, 'no "value" offered twice');
  t.equal(
    env({ app: [{ name: 'A', valueFrom: { fileKeyRef: { volumeName: 'c', path: 'p', kye: 'K' } } }] }),
    `${E}: /app/0/valueFrom/fileKeyRef: unknown field "kye" (did you mean "key"?) (and 1 more: envhook lint lists them)`,
  );
  t.equal(env({ app: [{ name: 'A', valueFrom: {} }] }), `${E}: /app/0/valueFrom: must have exactly one of "fileKeyRef" or "fileRef"`);
  t.equal(
    env({ app: [{ name: 'A', valueFrom: { fileKeyRef: fkr(), fileRef: { volumeName: 'c', path: 'p' } } }] }),
    `${E}: /app/0/valueFrom: must have exactly one of "fileKeyRef" or "fileRef"`,
  );
  t.equal(
    env({ app: [{ name: 'A', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }),
    `${E}: /app/0/valueFrom: unknown field "secretKeyRef"`,
  );
  t.equal(
    env({ app: [{ name: 'A', valueFrom: { fileRef: { volumeName: 'c', path: 'p', optional: true } } }] }),
    'no error',
    'a whole file as the value (docs/design.md#env-from-other-volumes)',
  );
  t.equal(
    env({ app: [{ name: 'A', valueFrom: { fileRef: { volumeName: 'c', path: 'p', key: 'K' } } }] }),
    `${E}: /app/0/valueFrom/fileRef: unknown field "key"`,
  );
  t.equal(
    env({ app: [{ name: 'A', valueFrom: { fileRef: { volumeName: 'c' } } }] }),
    `${E}: /app/0/valueFrom/fileRef: missing field "path"`,
  );
  t.equal(
    env({ app: [{ name: 'A', valueFrom: { fileRef: { volumeName: 'c', path: '../x' } } }] }),
    `${E}: /app/0/valueFrom/fileRef/path: must be a relative path with no '..' element and no NUL byte`,
  );
  t.equal(
    env({ app: [{ name: 'A', valueFrom: { fileKeyRef: fkr({ volumeName: 'Config' }) } }] }),
    `${E}: /app/0/valueFrom/fileKeyRef/volumeName: must be a DNS label: lowercase letters, digits and '-', at most 63 characters`,
  );
  t.equal(
    env({ app: [{ name: 'A', valueFrom: { fileKeyRef: fkr({ volumeName: 'a'.repeat(64) }) } }] }),
    `${E}: /app/0/valueFrom/fileKeyRef/volumeName: must NOT have more than 63 characters`,
  );
  for (const p of ['/etc/passwd', '../x', 'a/../../x', 'a/..', '..', 'a\u0000b']) {
    t.equal(
      env({ app: [{ name: 'A', valueFrom: { fileKeyRef: fkr({ path: p }) } }] }),
      `${E}: /app/0/valueFrom/fileKeyRef/path: must be a relative path with no '..' element and no NUL byte`,
      JSON.stringify(p),
    );
  }
  t.equal(env({ app: [{ name: 'A', valueFrom: { fileKeyRef: fkr({ path: '..a/b..' }) } }] }), 'no error', '`..a` is a name, not `..`');
  t.equal(
    env({ app: [{ name: 'A', valueFrom: { fileKeyRef: fkr({ key: '1X' }) } }] }),
    `${E}: /app/0/valueFrom/fileKeyRef/key: must be a variable name ([A-Za-z_][A-Za-z0-9_]*)`,
  );
  t.equal(
    env({ app: [{ name: 'A', valueFrom: { fileKeyRef: fkr({ optional: 'yes' }) } }] }),
    `${E}: /app/0/valueFrom/fileKeyRef/optional: must be boolean`,
  );
  t.equal(
    env({ app: [{ name: 'A', valueFrom: { fileKeyRef: { volumeName: 'config', key: 'K' } } }] }),
    `${E}: /app/0/valueFrom/fileKeyRef: missing field "path"`,
  );
  t.equal(
    env({ Bad_Name: [] }),
    `${E}: /Bad_Name: container name must be a DNS label: lowercase letters, digits and '-', at most 63 characters`,
  );
  t.equal(
    env({ '*': [] }),
    `${E}: /*: container name must be a DNS label: lowercase letters, digits and '-', at most 63 characters`,
    'env has no * entry',
  );
  t.equal(env({ app: {} }), `${E}: /app: must be array`);
  t.equal(env([]), `${E}: /: must be object`);
  t.equal(env({ app: Array.from({ length: 1025 }, () => ({ name: 'A', value: '' })) }), `${E}: /app: must NOT have more than 1024 items`);
  const F = 'annotation "envhook.io/envFrom"';
  t.equal(
    envFrom({ app: [{ prefix: '', fileRef: { volumeName: 'c', path: 'p' } }] }),
    `${F}: /app/0/prefix: must NOT have fewer than 1 characters (and 1 more: envhook lint lists them)`,
  );
  t.equal(
    envFrom({ app: [{ prefix: 'A=', fileRef: { volumeName: 'c', path: 'p' } }] }),
    `${F}: /app/0/prefix: must be printable ASCII without '='`,
  );
  t.equal(envFrom({ app: [{ fileRef: { volumeName: 'c', path: 'p', key: 'K' } }] }), `${F}: /app/0/fileRef: unknown field "key"`);
  t.equal(envFrom({ app: [{ prefix: 'P' }] }), `${F}: /app/0: must have exactly one of "fileRef" or "volumeRef"`);
  t.equal(
    envFrom({ app: [{ fileRef: { volumeName: 'c', path: 'p' }, volumeRef: { volumeName: 'c' } }] }),
    `${F}: /app/0: must have exactly one of "fileRef" or "volumeRef"`,
  );
  t.equal(
    envFrom({ app: [{ prefix: 'P_', volumeRef: { volumeName: 'c' } }, { volumeRef: { volumeName: 'c', path: 'db', optional: true } }] }),
    'no error',
    "a volume's files (docs/design.md#env-from-other-volumes)",
  );
  t.equal(envFrom({ app: [{ volumeRef: { path: 'db' } }] }), `${F}: /app/0/volumeRef: missing field "volumeName"`);
  t.equal(
    envFrom({ app: [{ volumeRef: { volumeName: 'c', path: '/etc' } }] }),
    `${F}: /app/0/volumeRef/path: must be a relative path with no '..' element and no NUL byte`,
  );
  t.equal(envFrom({ app: [{ volumeRef: { volumeName: 'c', key: 'K' } }] }), `${F}: /app/0/volumeRef: unknown field "key"`);
  const S = 'annotation "envhook.io/serviceLinks"';
  t.equal(links({ app: 'false' }), `${S}: /app: must be boolean`);
  t.equal(
    links({ 'A*': false }),
    `${S}: /A*: container name must be "*" or a DNS label: lowercase letters, digits and '-', at most 63 characters`,
  );
});

t.test('not JSON, too large, deeply nested: clear errors, no echo', async (t) => {
  t.equal(env(`{"app": [${CANARY}]}`), 'annotation "envhook.io/env" is not valid JSON');
  t.equal(env(`{"app": 1 ${CANARY}`), 'annotation "envhook.io/env" is not valid JSON (at offset 10)');
  t.equal(env(''), 'annotation "envhook.io/env" is not valid JSON (empty)');
  t.equal(
    env(JSON.stringify({ app: [{ name: 'A', value: 'x'.repeat(1024 * 1024) }] })),
    `annotation "envhook.io/env": larger than ${ANNOTATION_LIMIT} bytes`,
  );
  t.equal(
    env(JSON.stringify({ app: [{ name: 'A', value: CANARY.repeat(2000) }] })),
    'annotation "envhook.io/env": /app/0/value: must NOT have more than 32768 characters',
  );
  // Refused before the recursive parse: 100,000 levels would otherwise end in a RangeError.
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
  const tooDeep = 'annotation "envhook.io/env" nests deeper than 512 levels';
  t.equal(env(deep(10000)), tooDeep);
  t.equal(env(`{"app":[{"name":"A","value":"x","extra":${deep(10000)}}]}`), tooDeep);
  t.equal(env(`{"app":${deep(100000)}}`), tooDeep);
  t.equal(env(`{"app":[{"name":"A","value":"x","extra":${deep(500)}}]}`), 'annotation "envhook.io/env": /app/0: unknown field "extra"');
});

t.test('container selection', async (t) => {
  const value = { app: 1, '*': 2 };
  t.equal(entryFor(value, 'k', 'app', false), 1);
  t.equal(entryFor(value, 'k', 'other', false), undefined);
  t.equal(entryFor(value, 'k', 'other', true), 2);
  t.equal(entryFor(value, 'k', undefined, true), 2);
  t.equal(entryFor({ ['__proto__']: 1 } as Record<string, number>, 'k', 'constructor', false), undefined);
  t.equal(
    msg(() => entryFor({ app: 1 }, 'envhook.io/env', undefined, false)),
    'annotation "envhook.io/env": the container has no name (no Kubernetes annotations in config.json): add the annotation io.kubernetes.container.name=NAME or use envhook inject --container NAME',
  );
  t.equal(entryFor({}, 'k', undefined, false), undefined);
});

t.test('an annotation read and valid is remembered by its text, frozen; a refused one is checked each time', async (t) => {
  const text = JSON.stringify({ app: [{ name: 'A', value: 'memo-1' }] });
  const first = readEnv({ 'envhook.io/env': text });
  t.equal(readEnv({ 'envhook.io/env': text }), first, 'the same text: the same value');
  t.ok(Object.isFrozen(first) && Object.isFrozen(first!.app) && Object.isFrozen(first!.app![0]), 'frozen, deep');
  t.throws(() => (first!.app as unknown[]).push({ name: 'B', value: 'x' }), TypeError, 'a reader cannot change what others share');
  t.not(readEnv({ 'envhook.io/env': JSON.stringify({ app: [{ name: 'A', value: 'memo-2' }] }) }), first, 'another text: read anew');
  const bad = JSON.stringify({ app: [{ name: 'A' }] });
  for (let i = 0; i < 2; i++) t.throws(() => readEnv({ 'envhook.io/env': bad }), { message: /annotation "envhook.io\/env"/ });
});
