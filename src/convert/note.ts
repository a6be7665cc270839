// What convert leaves as it was, and why: one line on stderr per note, same shape as lint's
// findings (`file:line:column: annotation path: note: reason`), never a value.
import { oneLine } from '../errors.ts';

export interface Note {
  file: string;
  line: number;
  column: number;
  annotation: string;
  path: string;
  message: string;
}

export type Noter = (annotation: string, path: string, message: string, offset?: number) => void;

export function formatNote(n: Note): string {
  return oneLine(`${n.file}:${n.line}:${n.column}: ${n.path ? `${n.annotation} ${n.path}` : n.annotation}: note: ${n.message}`);
}

export { ptr } from '../manifest/nodes.ts';

/** The comment convert puts before the first env entry it moved out of envhook.io/env. */
export const MOVED_MARK = ' envhook convert: entries from here on came from envhook.io/env';
