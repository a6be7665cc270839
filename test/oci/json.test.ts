import t from 'tap';
import { parseLossless, stringifyLossless } from '../../src/oci/json.ts';
import { EnvhookError } from '../../src/errors.ts';

t.test('integers beyond 2^53 and odd number forms survive a round trip digit for digit', async (t) => {
  const text =
    '{"rlimits":[{"type":"RLIMIT_NOFILE","hard":18446744073709551615,"soft":1024}],"f":1.0,"e":1e3,"n":-0,"small":3.5,"x-unknown":{"a":[true,null]}}';
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

t.test('the plain-parse fast path gives what the lossless reviver gives', async (t) => {
  const { default: fc } = await import('fast-check');
  const { scanJson } = await import('../../src/oci/json.ts');
  const reviver = (text: string) =>
    JSON.parse(text, (_k, v, ctx: { source?: string }) =>
      typeof v === 'number' && ctx.source !== undefined && String(v) !== ctx.source ? JSON.rawJSON(ctx.source) : v,
    );
  const depth = (text: string) => {
    let d = 0,
      max = 0,
      inString = false;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{' || c === '[') max = Math.max(max, ++d);
      else if (c === '}' || c === ']') d--;
    }
    return max;
  };
  const odd = fc.constantFrom('1.0', '1e3', '-0', '18446744073709551615', '0.10', '1E2', '2e-7', '12', '-3.5', '0');
  // JSON text with odd number forms spliced in where a number is, strings with quotes and backslashes.
  const text = fc
    .tuple(fc.json(), fc.array(odd, { maxLength: 3 }), fc.string())
    .map(([j, nums, s]) => `{"s":${JSON.stringify(s + '\\"')},"j":${j},"n":[${nums.join(',')}]}`);
  fc.assert(
    fc.property(text, (tx) => {
      t.equal(stringifyLossless(parseLossless(tx, 'x')), JSON.stringify(reviver(tx)));
      t.equal(scanJson(tx).depth, depth(tx));
      return true;
    }),
    { numRuns: 2000 },
  );
  // Malformed text too (unterminated strings, stray backslashes): the depth is the old scan's.
  const junk = fc
    .array(fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a', ' ', '\n', '1.0', ','), { maxLength: 40 })
    .map((a) => a.join(''));
  fc.assert(
    fc.property(junk, (tx) => scanJson(tx).depth === depth(tx)),
    { numRuns: 20000 },
  );
  t.equal(scanJson('[[' + '"' + '\\'.repeat(5000) + '"]]').depth, 2);
  t.equal(scanJson('"' + '[{'.repeat(2000)).depth, 0);
});
