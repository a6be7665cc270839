// A clearly delimited block appended to an admin's file (containerd config.toml): the admin's
// bytes are never re-serialised, so comments and layout survive, and uninstall removes exactly
// what install added.
import { EnvhookError } from '../errors.ts';

const BEGIN = '# BEGIN envhook';
const END = '# END envhook';

export interface Split {
  /** The file without our block (and without the blank line install put before it). */
  rest: string;
  /** The block, BEGIN to END line inclusive, or undefined. */
  block: string | undefined;
}

export function splitBlock(text: string, file: string): Split {
  const lines = text.split(/(?<=\n)/);
  const begin = lines.findIndex((l) => l.startsWith(BEGIN));
  if (begin < 0) return { rest: text, block: undefined };
  const end = lines.findIndex((l, i) => i > begin && l.startsWith(END));
  if (end < 0) throw new EnvhookError(`${file}: "${BEGIN}" without "${END}": fix the file by hand`);
  if (lines.slice(end + 1).some((l) => l.startsWith(BEGIN))) throw new EnvhookError(`${file}: more than one envhook block`);
  let before = lines.slice(0, begin).join('');
  const after = lines.slice(end + 1).join('');
  // install separates the block from the admin's text with one blank line
  if (after === '' && before.endsWith('\n\n')) before = before.slice(0, -1);
  return { rest: before + after, block: lines.slice(begin, end + 1).join('') };
}

/** `rest` with `body` appended as our block; replaces an existing block in place. */
export function withBlock(text: string, body: string, file: string): string {
  const block = `${BEGIN} (written by envhook install; removed by envhook uninstall)\n${body.endsWith('\n') ? body : body + '\n'}${END}\n`;
  const lines = text.split(/(?<=\n)/);
  const begin = lines.findIndex((l) => l.startsWith(BEGIN));
  if (begin >= 0) {
    splitBlock(text, file); // validates
    const end = lines.findIndex((l, i) => i > begin && l.startsWith(END));
    return lines.slice(0, begin).join('') + block + lines.slice(end + 1).join('');
  }
  if (text === '') return block;
  return text + (text.endsWith('\n') ? '\n' : '\n\n') + block;
}
