// An admin's file that installs mark, with envhook's block or a key changed in place: its new
// text when the marks of some installs are taken out (uninstall, or a reinstall replacing its
// own) and one install's marks put in. While any install still marks the file, only the marks
// change; once none does, the admin's original comes back from the backup, byte for byte.
import { splitBlock, withBlock } from './block.ts';
import { backupPath, type Layout } from './layout.ts';
import { readHost, type Change } from './fsops.ts';
import { applyEdit, hasEdit, revertEdit, type KeyEdit } from './key-edit.ts';
import { marks, type RuntimeRecord } from './state.ts';
import type { BlockTarget } from './targets.ts';
import { EnvhookError } from '../errors.ts';

export interface Marks {
  block?: BlockTarget | undefined;
  edits: KeyEdit[];
}

/**
 * The change of `file`: the marks recorded in `remove` taken out, `add` put in; `keep` are the
 * records of the other installs, whose marks stay.
 */
export function adminFileChange(
  layout: Layout,
  file: string,
  remove: RuntimeRecord[],
  add: Marks | undefined,
  keep: RuntimeRecord[],
): Change {
  const before = readHost(layout, file);
  const original = before?.toString('utf8') ?? '';
  const notes: string[] = [];
  let text = original;
  const taken = new Set<string>();
  for (const rec of remove) {
    for (const e of (rec.edits ?? []).filter((x) => x.file === file)) {
      const back = revertEdit(text, e);
      if (back === undefined)
        notes.push(`changed since install: envhook's line "${e.to.trim()}" is not there any more; the file is left as it is there`);
      else taken.add('changed line');
      text = back ?? text;
    }
    // a block install rewrites stays where it is (withBlock replaces it in place)
    if (rec.blocks.includes(file) && !add?.block) {
      const split = splitBlock(text, file);
      if (split.block !== undefined) taken.add('block');
      text = split.rest;
    }
  }
  for (const e of add?.edits ?? []) {
    const edited = applyEdit(text, e);
    if (edited === undefined) throw new EnvhookError(`${file}: the line "${e.from?.trim()}" changed while install ran: run install again`);
    text = edited;
  }
  if (add?.block) text = withBlock(text, add.block.body, file);
  const mode = add?.block?.mode ?? 0o644;
  if (text === original && !add?.block) {
    // the file is gone, or already as its backup (another install, which took this one over, took
    // its block out): a backup nothing will put back is dropped
    const backup = keep.some((rec) => marks(rec, file)) ? undefined : readHost(layout, backupPath(layout, file));
    const stale = backup !== undefined && (before === undefined || backup.equals(before));
    return { file, before, after: before, mode, ...(stale ? { dropBackup: true } : {}), ...note(notes) };
  }

  const marked = add?.block !== undefined || (add?.edits.length ?? 0) > 0 || keep.some((rec) => marks(rec, file));
  if (marked) {
    // the first mark saves the admin's file; later ones only change the marks
    const hadMark =
      splitBlock(original, file).block !== undefined ||
      [...remove, ...keep].some((rec) => (rec.edits ?? []).some((e) => e.file === file && hasEdit(original, e)));
    const why = add?.block?.note && text !== original ? [add.block.note] : [];
    return { file, before, after: Buffer.from(text), mode, backup: before !== undefined && !hadMark, ...note([...why, ...notes]) };
  }
  const saved = backupPath(layout, file);
  const backup = readHost(layout, saved);
  if (backup !== undefined) {
    // byte for byte: the backup, unless the admin changed the file since install
    if (backup.toString('utf8').replace(/\n+$/, '') === text.replace(/\n+$/, ''))
      return { file, before, after: backup, mode, dropBackup: true };
    return {
      file,
      before,
      after: Buffer.from(text),
      mode,
      ...note([...notes, `changed since install: only envhook's ${[...taken].join(' and ')} removed; the original is in ${saved}`]),
    };
  }
  // no backup: install created the file, and nothing but envhook's marks is in it
  return { file, before, after: text.trim() === '' ? undefined : Buffer.from(text), mode, ...note(notes) };
}

function note(notes: string[]): { note?: string } {
  return notes.length ? { note: notes.join('; ') } : {};
}
