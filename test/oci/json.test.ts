import t from 'tap';
import { parseLossless, stringifyLossless } from '../../src/oci/json.ts';
import { EnvhookError } from '../../src/errors.ts';

t.test('integers beyond 2^53 and odd number forms survive a round trip digit for digit', async (t) => {
  const text = '{"rlimits":[{"type":"RLIMIT_NOFILE","hard":18446744073709551615,"soft":1024}],"f":1.0,"e":1e3,"n":-0,"small":3.5,"x-unknown":{"a":[true,null]}}';
  t.equal(stringifyLossless(parseLossless(text, 'spec')), text);
});

t.test('syntax errors give the position, never the input', async (t) => {
  const secret = 'CANARY_json_8d1c';
  const err = t.throws(() => parseLossless(`{"a":"${secret}" x}`, 'annotation "envhook.io/env"')) as Error;
  t.type(err, EnvhookError);
  t.equal(err.message, 'annotation "envhook.io/env" is not valid JSON (at offset 24)');
  t.notMatch(String((err.cause as Error).message), secret);
  t.equal((t.throws(() => parseLossless('{"a":', 'x')) as Error).message, 'x is not valid JSON (truncated)');
  t.equal((t.throws(() => parseLossless('  ', 'x')) as Error).message, 'x is not valid JSON (empty)');
});
