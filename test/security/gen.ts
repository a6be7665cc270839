// fast-check generators of hostile env files and annotation values carrying a canary: a
// recognizable string placed in every position a byte of a file or a value can take (inside
// values, in malformed lines, after quotes, in invalid names, in comments, past the limits).
// Valid variable names are drawn from a fixed pool, so names (which --names and plans print)
// never carry the canary.
import fc from 'fast-check';

/** The tag every canary starts with: any output containing it leaked a canary. */
export const TAG = 'CNRY';

const NAMES = ['A', 'B', 'DB_URL', '_x', 'TOKEN', 'path2'];

const name = fc.constantFrom(...NAMES);
const blanks = fc.constantFrom('', ' ', '\t', '  \t');
/** Text around a canary: printable ASCII, quotes, `$(…)`, newlines, non-ASCII. */
const noise = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('$(A)', '$$', "'", '"', '\\', '\n', '\r', '\r\n', '#', '=', ' ', '\u00e9', '\u2028', '\ud83d\ude00', '\u0000', '\ufeff'),
);

/** A string with the canary somewhere in it. */
function withCanary(canary: string): fc.Arbitrary<string> {
  return fc.tuple(noise, noise).map(([a, b]) => `${a}${canary}${b}`);
}

/** A line bash and envhook accept, with the canary in its value or comment. */
function acceptedLine(canary: string): fc.Arbitrary<string> {
  const quotedSafe = fc.string({ maxLength: 8 }).map((s) => s.replace(/'/g, ''));
  return fc.oneof(
    fc.tuple(blanks, name, quotedSafe).map(([b, n, v]) => `${b}${n}='${v}${canary}${v}'`),
    fc.tuple(name, quotedSafe).map(([n, v]) => `${n}='${v}\n${canary}\n'`),
    fc.tuple(name, blanks).map(([n, b]) => `${n}='${canary}'${b}# ${canary}`),
    fc.tuple(name, blanks).map(([n, b]) => `${b}# ${canary}\n${n}=''`),
  );
}

/** One line (or a few physical lines) of an env file with the canary in some position. */
function hostileLine(canary: string): fc.Arbitrary<string> {
  const c = withCanary(canary);
  return fc.oneof(
    acceptedLine(canary),
    // rejected forms
    fc.tuple(name, c).map(([n, v]) => `${n}=${v}`),
    fc.tuple(name, c).map(([n, v]) => `${n}="${v}"`),
    fc.tuple(name, c).map(([n, v]) => `${n}= '${v}'`),
    fc.tuple(name, c).map(([n, v]) => `${n} ='${v}'`),
    fc.tuple(name, c).map(([n, v]) => `${n}='${canary}'${v}`),
    fc.tuple(name, c).map(([n, v]) => `${n}='${canary}''${v}'`),
    fc.tuple(name, c).map(([n, v]) => `${n}='${v}`),
    fc.tuple(name).map(([n]) => `${n}='${canary}`),
    c,
    fc.constant(`${canary}`),
    fc.constant(`9${canary}='x'`),
    fc.constant(`${canary}-x='x'`),
    fc.constant(`export ${canary}='x'`),
    fc.constant(`-${canary}='${canary}'`),
    fc.constant(`${'N'.repeat(129)}${canary}='x'`),
    fc.constant(`=${canary}`),
    fc.constant(`='${canary}'`),
    c.map((v) => `# ${v}`),
    c.map((v) => `A='${v}'\r`),
    c.map((v) => `A='${v}\u0000'`),
    fc.constant(`A='${'v'.repeat(32 * 1024)}${canary}'`),
    fc.uint8Array({ maxLength: 24 }).map((u) => `A='${Buffer.from(u).toString('latin1')}${canary}'`),
    fc.uint8Array({ maxLength: 24 }).map((u) => `${Buffer.from(u).toString('latin1')}${canary}`),
  );
}

/** A whole env file: lines with canaries, LF or CRLF, optional BOM, sometimes over 64 KiB. */
export function hostileEnvFile(canary: string): fc.Arbitrary<Buffer> {
  return fc
    .record({
      // A third of the files are made only of accepted lines (the success paths must not leak).
      lines: fc.oneof(
        fc.array(hostileLine(canary), { minLength: 1, maxLength: 8 }),
        { arbitrary: fc.array(acceptedLine(canary), { minLength: 1, maxLength: 8 }), weight: 2 },
        fc.array(hostileLine(canary), { minLength: 1, maxLength: 2 }),
      ),
      eol: fc.constantFrom('\n', '\n', '\n', '\n', '\n', '\n', '\n', '\r\n'),
      bom: fc.constantFrom('', '', '', '', '', '', '', '\ufeff'),
      invalidUtf8: fc.constantFrom(false, false, false, false, false, false, false, true),
      huge: fc.constantFrom(false, false, false, false, false, false, false, false, false, true),
    })
    .map(({ lines, eol, bom, invalidUtf8, huge }) => {
      let text = bom + lines.join(eol) + eol;
      if (huge) text += `B='${canary}${'x'.repeat(64 * 1024)}'\n`;
      const buf = Buffer.from(text, 'utf8');
      if (!invalidUtf8) return buf;
      // Replace one byte of the canary's neighbourhood with a lone continuation byte.
      const at = buf.indexOf(canary);
      return at > 0 ? Buffer.concat([buf.subarray(0, at - 1), Buffer.from([0x80]), buf.subarray(at)]) : buf;
    });
}

const PREFIXES = ['P_', 'CFG_'];
const KEYS = NAMES;

/** One EnvVar-like entry: valid with the canary in `value`, or hostile with it anywhere. */
function hostileEnvVar(canary: string): fc.Arbitrary<unknown> {
  const c = withCanary(canary);
  const ref = fc.record({
    volumeName: fc.constantFrom('cfg', 'cfg', 'cfg', 'nope', 'Bad/Name', '../x'),
    path: fc.constantFrom('app.env', 'app.env', 'missing.env', '/etc/shadow', '../app.env', 'a/../../x', 'link.env', 'fifo'),
    key: fc.constantFrom(...KEYS),
    optional: fc.boolean(),
  });
  return fc.oneof(
    { arbitrary: fc.record({ name: name, value: c }), weight: 4 },
    { arbitrary: fc.record({ name: name, valueFrom: fc.record({ fileKeyRef: ref }) }), weight: 4 },
    fc.record({ name: name, value: c.map((v) => `$(${v})$$(${canary})`) }),
    fc.record({ name: name, value: c.map((v) => `$(A)${v}$(PATH)`) }),
    fc.record({ name: name, value: c, valueFrom: fc.record({ fileKeyRef: ref }) }),
    fc.record({ name: name, value: c.map((v) => ({ nested: v })) }),
    fc.record({ name: name, value: c.map((v) => [v]) }),
    fc.record({ name: name, value: c.map((v) => `${v}\u0000`) }),
    fc.record({ name: name, value: c.map((v) => v + 'x'.repeat(32768)) }),
    fc.record({ name: c.map((v) => `${v}=`), value: c }),
    fc.record({ name: c.map((v) => `${v}\n`), value: c }),
    fc.record({ name: fc.constant(''), value: c }),
    fc.record({ name: name, value: c, extra: c }),
    // Never a valid key: a valid one is the annotation's own name, which messages name on purpose
    // (`key "K" not found`); noise shrunk to nothing once left the bare canary, a valid name.
    fc.record({
      name: name,
      valueFrom: fc.record({
        fileKeyRef: fc.record({ volumeName: fc.constant('cfg'), path: fc.constant('app.env'), key: c.map((v) => `${v}-`) }),
      }),
    }),
    fc.record({
      name: name,
      valueFrom: fc.record({
        fileKeyRef: fc.record({ volumeName: fc.constant('cfg'), path: fc.constant('app.env'), key: fc.constant('A'), optional: c }),
      }),
    }),
    c,
    fc.constant(null),
  );
}

/** envFrom entries with prefixes from a fixed pool (prefixed names are printed by plans). */
function hostileEnvFrom(canary: string): fc.Arbitrary<unknown> {
  return fc.oneof(
    {
      arbitrary: fc.record({
        prefix: fc.constantFrom(...PREFIXES),
        fileRef: fc.record({ volumeName: fc.constant('cfg'), path: fc.constantFrom('app.env', 'missing.env'), optional: fc.boolean() }),
      }),
      weight: 4,
    },
    fc.record({
      prefix: withCanary(canary).map((v) => `${v}=`),
      fileRef: fc.record({ volumeName: fc.constant('cfg'), path: fc.constant('app.env') }),
    }),
    fc.record({ fileRef: fc.record({ volumeName: fc.constant('cfg'), path: withCanary(canary) }) }).map((x) => ({ ...x, secret: canary })),
  );
}

/** The raw text of an annotation: usually valid JSON, sometimes truncated or garbage. */
function annotationText(value: fc.Arbitrary<unknown>, canary: string): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: value.map((v) => JSON.stringify(v)), weight: 6 },
    fc.tuple(value, fc.nat()).map(([v, n]) => {
      const s = JSON.stringify(v);
      return s.slice(0, n % Math.max(s.length, 1));
    }),
    withCanary(canary).map((v) => `{"app": [{"name": "A", "value": ${v}}]}`),
    withCanary(canary),
    fc.constant(`${'['.repeat(10_000)}"${canary}"${']'.repeat(10_000)}`),
  );
}

/** The three env annotations for container `app` (sometimes keyed otherwise), hostile. */
export function hostileAnnotations(canary: string): fc.Arbitrary<Record<string, string>> {
  const container = fc.constantFrom('app', 'app', 'app', 'app', 'other', 'constructor', '__proto__', 'App', '*');
  const env = fc.tuple(container, fc.array(hostileEnvVar(canary), { maxLength: 5 })).map(([c, list]) => ({ [c]: list }));
  const envFrom = fc.tuple(container, fc.array(hostileEnvFrom(canary), { maxLength: 3 })).map(([c, list]) => ({ [c]: list }));
  const links = fc.tuple(container, fc.oneof(fc.boolean(), withCanary(canary))).map(([c, v]) => ({ [c]: v }));
  return fc
    .record({
      env: fc.option(annotationText(env, canary)),
      envFrom: fc.option(annotationText(envFrom, canary), { freq: 2 }),
      links: fc.option(annotationText(links, canary), { freq: 2 }),
    })
    .map(({ env, envFrom, links }) => {
      const out: Record<string, string> = {};
      if (env !== null) out['envhook.io/env'] = env;
      if (envFrom !== null) out['envhook.io/envFrom'] = envFrom;
      if (links !== null) out['envhook.io/serviceLinks'] = links;
      return out;
    });
}

/** Annotations that pass the schemas: the canary only in `value`s, files read from `cfg`. */
export function wellFormedAnnotations(canary: string): fc.Arbitrary<Record<string, string>> {
  const c = withCanary(canary).map((v) => v.replace(/\u0000/g, ''));
  const ref = fc.record({
    volumeName: fc.constant('cfg'),
    path: fc.constantFrom('app.env', 'app.env', 'app.env', 'missing.env', 'link.env', 'fifo'),
    key: fc.constantFrom(...KEYS),
    optional: fc.constantFrom(true, true, false),
  });
  const envVar = fc.oneof(
    fc.record({ name: name, value: c }),
    fc.record({ name: name, value: c.map((v) => `$(A)$(TOKEN)${v}$(IMAGE_SECRET)`) }),
    fc.record({ name: name, valueFrom: fc.record({ fileKeyRef: ref }) }),
  );
  const fromEntry = fc.record({
    prefix: fc.constantFrom(...PREFIXES),
    fileRef: fc.record({
      volumeName: fc.constant('cfg'),
      path: fc.constantFrom('app.env', 'missing.env'),
      optional: fc.constantFrom(true, true, false),
    }),
  });
  return fc
    .record({ env: fc.array(envVar, { maxLength: 6 }), envFrom: fc.array(fromEntry, { maxLength: 2 }), links: fc.option(fc.boolean()) })
    .map(({ env, envFrom, links }) => {
      const out: Record<string, string> = { 'envhook.io/env': JSON.stringify({ app: env }) };
      // Every other entry without a prefix.
      if (envFrom.length) out['envhook.io/envFrom'] = JSON.stringify({ app: envFrom.map((e, i) => (i % 2 ? { fileRef: e.fileRef } : e)) });
      if (links !== null) out['envhook.io/serviceLinks'] = JSON.stringify({ '*': links });
      return out;
    });
}
