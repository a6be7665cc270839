// The pod author's annotations' schema errors, worded once for the node and lint: the field
// names each schema knows, every error as lint lists it, and the node's refusal (lint's line).
import t from 'tap';
import { everySchemaError, lintsRefusal, schemaFields, schemaMessages } from '../../src/k8s/annotation-schema.ts';
import { SchemaError } from '../../src/errors.ts';

const W = 'annotation "envhook.io/env"';

t.test("field names: every field of the annotation's schema, none of another's", async (t) => {
  t.same(schemaFields('envhook.io/env'), ['fileKeyRef', 'fileRef', 'key', 'name', 'optional', 'path', 'value', 'valueFrom', 'volumeName']);
  t.same(schemaFields('envhook.io/volumeOwners'), ['defaultUser', 'items', 'path', 'user', 'volume']);
  t.same(schemaFields('envhook.io/evictUnapplied'), []);
  t.equal(schemaMessages('envhook.io/envFrom').oneOf, 'must have exactly one of "fileRef" or "volumeRef"');
});

t.test("every error, as lint lists it; the node's refusal leads with an unknown field and counts the rest", async (t) => {
  const data = {
    app: [
      { name: 'A', vaule: '1' },
      { name: 'B=', value: 'x' },
    ],
  };
  t.same(
    everySchemaError('envhook.io/env', data, W).map((e) => `${e.at}: ${e.reason}`),
    [
      '/app/0: must have exactly one of "value" or "valueFrom"',
      '/app/0: unknown field "vaule" (did you mean "value"?)',
      "/app/1/name: must be printable ASCII without '='",
    ],
  );
  const first = new SchemaError(W, '/app/0', 'must have exactly one of "value" or "valueFrom"');
  t.equal(
    lintsRefusal('envhook.io/env', data, W, first).message,
    `${W}: /app/0: unknown field "vaule" (did you mean "value"?) (and 2 more: envhook lint lists them)`,
  );
  const one = { app: [{ name: 'A' }] };
  t.equal(
    lintsRefusal('envhook.io/env', one, W, first).message,
    `${W}: /app/0: must have exactly one of "value" or "valueFrom"`,
    'one error: its line alone',
  );
  const beside = new SchemaError('annotation "envhook.io/volumeOwners"', '/1/volume', 'volume "a" is listed more than once');
  t.equal(
    lintsRefusal('envhook.io/volumeOwners', [{ volume: 'a' }, { volume: 'a' }], 'x', beside),
    beside,
    'a rule beside the schema stands alone',
  );
});
