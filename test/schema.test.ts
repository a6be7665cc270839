// Schema errors as one safe line: the input, the JSON path, a reason; never the data.
import t from 'tap';
import { allSchemaErrors, check, validateSettingsFile, validateState } from '../src/schema.ts';
import { validateVolumeOwners, validateEnvAnnotation } from '../src/generated/validators.js';
import { SchemaError } from '../src/errors.ts';

const CANARY = 'CANARY-schema-5e';

t.test('path and reason, custom messages by keyword and field', async (t) => {
  t.throws(() => check(validateVolumeOwners, [{ volume: 'v', defaultUser: -1 }], 'annotation "x"'), {
    message: /^annotation "x": \/0\/defaultUser: /,
  });
  t.throws(
    () => check(validateVolumeOwners, [{ volume: 'v', [CANARY]: 1 }], 'w'),
    new SchemaError('w', '/0', `unknown field "${CANARY}"`),
    'an unknown field is named',
  );
  t.throws(() => check(validateVolumeOwners, [{}], 'w'), new SchemaError('w', '/0', 'missing field "volume"'));
  t.throws(
    () =>
      check(
        validateEnvAnnotation,
        {
          app: [{ name: 'A', value: 'x', valueFrom: {} }],
        },
        'w',
        { oneOf: 'exactly one' },
      ),
    { message: /^w: \/app\/0: / },
  );
  const err = t.throws(() => check(validateEnvAnnotation, { app: [{ name: `${CANARY}=`, value: 'x' }] }, 'w')) as Error;
  t.match(err.message, /^w: \/app\/0\/name: /);
  t.notMatch(err.message, CANARY, 'a value that fails its pattern is not repeated');
  t.doesNotThrow(() => check(validateVolumeOwners, [{ volume: 'v', defaultUser: 0 }], 'w'));
});

t.test('the named validators', async (t) => {
  t.throws(() => validateSettingsFile({ logLevel: 'loud' }, 'config file f'), {
    message: /^config file f: \/logLevel: must be one of "fatal"/,
  });
  t.throws(() => validateState({}, 'state'), { message: /^state: \/: missing field / });
});

t.test('allSchemaErrors: every error, worded as check() words one; combinator and property-name internals folded', async (t) => {
  const all = await import('../src/generated/validators-all.js');
  const lines = (v: Parameters<typeof allSchemaErrors>[0], data: unknown, messages = {}) =>
    allSchemaErrors(v, data, 'w', messages).map((e) => e.message);
  t.same(
    lines(
      all.validateEnvAnnotation,
      { Bad_Name: [{ name: 'A' }], app: [{ name: 'B', value: 'x', extra: 1 }], side: {} },
      {
        oneOf: 'one of value or valueFrom',
        propertyNames: 'bad container name',
      },
    ),
    [
      'w: /Bad_Name: bad container name',
      'w: /Bad_Name/0: one of value or valueFrom',
      'w: /app/0: unknown field "extra"',
      'w: /side: must be array',
    ],
  );
  t.same(lines(all.validateVolumeOwners, { volume: 'v' }), ['w: /: must be array'], 'a type error alone');
  t.same(lines(all.validateVolumeOwners, [{ volume: 'v', defaultUser: 1 }]), [], 'valid: none');
  t.same(lines(all.validateEnvAnnotation, { app: [{ name: `${CANARY}=`, value: 'x' }] }), ['w: /app/0/name: not in the form allowed here']);
});
