// A file envhook wrote whole, taken back by uninstall and by a reinstall that no longer writes
// it: removed, with what it replaced put back from the backup, unless the admin changed it since.
// A changed file stays the admin's, but one that is executable or names another file being
// removed (the NRI plugin wrapper, a hooks.d file) is moved out of every runtime's reach.
import fs from 'node:fs';
import path from 'node:path';
import { backupPath, type Layout } from './layout.ts';
import { readHost, sha256, type Change } from './fsops.ts';

/** A file envhook wrote whole, removed (what it replaced put back), unless the admin changed it. */
export function removeFile(layout: Layout, file: string, hash: string, removed: string[]): Change {
  const before = readHost(layout, file);
  const saved = backupPath(layout, file);
  const backup = readHost(layout, saved);
  if (before === undefined || sha256(before) === hash)
    return { file, before, after: backup, mode: 0o644, dropBackup: backup !== undefined };
  const original = backup ? `; the original is back from ${saved}` : '';
  const runs = removed.find((f) => f !== file && before.includes(f));
  const executable = (fs.statSync(layout.real(file)).mode & 0o111) !== 0;
  if (!runs && !executable)
    return {
      file,
      before,
      after: before,
      mode: 0o644,
      note: `changed since install: left in place${backup ? `; the original is in ${saved}` : ''}`,
    };
  // the admin's edit is kept, where no runtime starts it
  const aside = asidePath(layout, file);
  const why = runs ? `it runs ${runs}, which uninstall removes` : 'an executable envhook placed';
  return {
    file,
    before,
    after: backup,
    mode: 0o644,
    dropBackup: backup !== undefined,
    saveAs: aside,
    note: `changed since install, and ${why}: moved to ${aside} (mode 0600: nothing starts it)${original}`,
  };
}

/** `<prefix>/backup/<file>.edited` (then .edited.2, …): outside every directory a runtime reads. */
function asidePath(layout: Layout, file: string): string {
  const base = `${backupPath(layout, file)}.edited`;
  let p = base;
  for (let i = 2; fs.existsSync(layout.real(p)); i++) p = `${base}.${i}`;
  return path.posix.normalize(p);
}
