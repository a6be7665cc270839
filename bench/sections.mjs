// The marked sections of bench/RESULTS.md that a script of its own writes (rows 10 to 13, the soak):
// each between its start and end markers, replaced in place, or put before bench/watch.ts's
// section (which owns the file's end); `npm run bench` keeps them when it rewrites the file.
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from './cli.mjs';

export const RESULTS = path.join(REPO, 'bench/RESULTS.md');
const WATCH = '<!-- bench/watch.ts -->';
/** The sections run.mjs keeps: [start, end] markers. */
export const OWN_SECTIONS = [
  ['<!-- row 10: CRI with NRI -->', '<!-- end of row 10 -->'],
  ['<!-- row 11: NRI restart -->', '<!-- end of row 11 -->'],
  ['<!-- row 12: owned copies -->', '<!-- end of row 12 -->'],
  ['<!-- row 13: NRI pre-installed start -->', '<!-- end of row 13 -->'],
  ['<!-- soak: 110 pods -->', '<!-- end of soak: 110 pods -->'],
  ['<!-- soak: 250 pods -->', '<!-- end of soak: 250 pods -->'],
];

/** The markers of bench/soak.mjs's section at `pods` pods, or undefined for a size that has none. */
export function soakMarkers(pods) {
  return OWN_SECTIONS.find(([start]) => start === `<!-- soak: ${pods} pods -->`);
}

export function replaceMarkedSection(start, end, section) {
  const text = fs.existsSync(RESULTS) ? fs.readFileSync(RESULTS, 'utf8') : '';
  const at = text.indexOf(start);
  const to = text.indexOf(end);
  const watchAt = text.indexOf(WATCH);
  const next =
    at >= 0 && to > at
      ? text.slice(0, at) + section + text.slice(to + end.length)
      : watchAt >= 0
        ? `${text.slice(0, watchAt)}${section}\n\n${text.slice(watchAt)}`
        : `${text.trimEnd()}\n\n${section}\n`;
  fs.writeFileSync(RESULTS, next);
}

/** The marked sections of `text`, each followed by a blank line, in file order. */
export function keptSections(text) {
  return OWN_SECTIONS.map(([s, e]) => [text.indexOf(s), text.indexOf(e), e])
    .filter(([a, b]) => a >= 0 && b > a)
    .sort((x, y) => x[0] - y[0])
    .map(([a, b, e]) => `\n${text.slice(a, b + e.length)}\n`)
    .join('');
}
