// The files CRI-O reads, as it reads them: crio.conf, then every file under crio.conf.d, whatever
// its name, subdirectories included, in Go's filepath.Walk order (names sorted; a directory walked
// where its name sorts) (pkg/config/config.go UpdateFromPath). Each is parsed: one that is not
// TOML is refused with its line and column, as CRI-O does not start with it. Both CRI-O installs
// read them here: the NRI plugin's (nri_plugin_dir, enable_nri) and, without a crio binary to
// ask, the runtime handler's (hooks_dir).
import fs from 'node:fs';
import path from 'node:path';
import type { Layout } from '../layout.ts';
import { readHost } from '../fsops.ts';
import { parseToml, type Table } from '../toml.ts';
import { CRIO_DROP_IN_DIR } from '../config-read.ts';
import { CRIO_MAIN_CONFIG } from './crio-check.ts';

export interface CrioFile {
  /** Host path. */
  file: string;
  doc: Table;
}

/** The files that exist, in CRI-O's order, parsed. */
export function readCrioFiles(layout: Layout): CrioFile[] {
  return [CRIO_MAIN_CONFIG, ...dropIns(layout, CRIO_DROP_IN_DIR)].flatMap((file) => {
    const text = readHost(layout, file)?.toString('utf8');
    return text === undefined ? [] : [{ file, doc: parseToml(text, file) }];
  });
}

/** The drop-ins CRI-O reads, in its order, as host paths. */
function dropIns(layout: Layout, dir: string): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(layout.real(dir), { withFileTypes: true });
  } catch {
    return [];
  }
  const byName = (a: fs.Dirent, b: fs.Dirent) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return entries.sort(byName).flatMap((e) => {
    const file = path.posix.join(dir, e.name);
    return e.isDirectory() ? dropIns(layout, file) : [file];
  });
}
