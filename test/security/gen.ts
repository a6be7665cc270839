// fast-check generators of hostile env files and annotation values carrying a canary: a
// recognizable string placed in every position a byte of a file or a value can take (inside
// values, in malformed lines, after quotes, in invalid names, in comments, past the limits).
// Valid variable names are drawn from a fixed pool, so names (which --names and plans print)
// never carry the canary.
import fc from 'fast-check';

/** The tag every canary starts with: any output containing it leaked a canary. */
export const TAG = 'CNRY';

export const NAMES = ['A', 'B', 'DB_URL', '_x', 'TOKEN', 'path2'];

const name = fc.constantFrom(...NAMES);
const blanks = fc.constantFrom('', ' ', '\t', '  \t');
/** Text around a canary: printable ASCII, quotes, `$(…)`, newlines, non-ASCII. */
const noise = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('$(A)', '$$', "'", '"', '\\', '\n', '\r', '\r\n', '#', '=', ' ', '\u00e9', '\u2028', '\ud83d\ude00', '\u0000', '\ufeff'),
);

/** A string with the canary somewhere in it. */
export function withCanary(canary: string): fc.Arbitrary<string> {
  return fc.tuple(noise, noise).map(([a, b]) => `${a}${canary}${b}`);
}

/** A line bash and envhook accept, with the canary in its value or comment. */
export function acceptedLine(canary: string): fc.Arbitrary<string> {
  const quotedSafe = fc.string({ maxLength: 8 }).map((s) => s.replace(/'/g, ''));
  return fc.oneof(
    fc.tuple(blanks, name, quotedSafe).map(([b, n, v]) => `${b}${n}='${v}${canary}${v}'`),
    fc.tuple(name, quotedSafe).map(([n, v]) => `${n}='${v}\n${canary}\n'`),
    fc.tuple(name, blanks).map(([n, b]) => `${n}='${canary}'${b}# ${canary}`),
    fc.tuple(name, blanks).map(([n, b]) => `${b}# ${canary}\n${n}=''`),
  );
}

/** One line (or a few physical lines) of an env file with the canary in some position. */
export function hostileLine(canary: string): fc.Arbitrary<string> {
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
