// lint lists every schema error of an annotation, in the node's words; a rule beside the schema
// (a volume listed twice) is the reader's own single error.
import t from 'tap';
import { everySchemaError } from '../../src/lint/schema-errors.ts';

const lines = (key: string, value: unknown) => everySchemaError(key, JSON.stringify(value)).map((e) => `${e.at}: ${e.reason}`);

t.test('every schema error of each annotation, with the readers’ human messages', async (t) => {
  t.same(
    lines('envhook.io/env', {
      app: [
        { name: 'A', value: '1', valueFrom: { fileRef: { volumeName: 'v', path: 'p' } } },
        { name: 'B', valueFrom: { fileKeyRef: { volumeName: 'Vol', path: '../x', key: '1' } } },
      ],
    }),
    [
      '/app/0: must have exactly one of "value" or "valueFrom"',
      "/app/1/valueFrom/fileKeyRef/volumeName: must be a DNS label: lowercase letters, digits and '-', at most 63 characters",
      "/app/1/valueFrom/fileKeyRef/path: must be a relative path with no '..' element and no NUL byte",
      '/app/1/valueFrom/fileKeyRef/key: must be a variable name ([A-Za-z_][A-Za-z0-9_]*)',
    ],
  );
  t.same(
    lines('envhook.io/envFrom', { app: [{ fileRef: { volumeName: 'v', path: 'p' }, volumeRef: { volumeName: 'v' } }, { prefix: 'a=' }] }),
    [
      '/app/0: must have exactly one of "fileRef" or "volumeRef"',
      '/app/1: must have exactly one of "fileRef" or "volumeRef"',
      "/app/1/prefix: must be printable ASCII without '='",
    ],
  );
  t.same(lines('envhook.io/serviceLinks', { '*': 0, B: false }), [
    `/B: container name must be "*" or a DNS label: lowercase letters, digits and '-', at most 63 characters`,
    '/*: must be boolean',
  ]);
  t.same(
    lines('envhook.io/volumeOwners', [
      { volume: 'a', defaultUser: -1 },
      { volume: 'b', extra: 1 },
    ]),
    ['/0/defaultUser: must be >= 0', '/1: unknown field "extra"'],
  );
});

t.test('none where the schema passes (a rule beside it, or no schema)', async (t) => {
  t.same(lines('envhook.io/volumeOwners', [{ volume: 'a' }, { volume: 'a' }]), []);
  t.same(lines('envhook.io/evictUnapplied', 'true'), []);
});
