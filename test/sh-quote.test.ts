// shQuote: dash reads back every byte of the word, quotes, `$(…)`, backticks and newlines included.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { shQuote } from '../src/sh-quote.ts';

t.test('a word sh reads back byte for byte', async (t) => {
  for (const s of ['', 'plain', "it's", "''", '$(id) `id` $HOME \\ "x"', 'a\nb\tc', "'\\''"]) {
    t.equal(shQuote(s).startsWith("'"), true);
    const r = spawnSync('dash', ['-c', `printf '%s' ${shQuote(s)}`], { encoding: 'utf8' });
    t.equal(r.stdout, s, JSON.stringify(s));
  }
});
