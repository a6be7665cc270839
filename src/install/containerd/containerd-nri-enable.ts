// Whether NRI is on as containerd reads the files, and how install switches it on where it is
// off: with a table of its own (envhook's block) when no file sets NRI's table, or, where an
// admin's file sets `disable = true` there (the file `containerd config default` writes on 1.7),
// only with --enable-nri, by changing exactly that line (the file backed up first; uninstall puts
// the line back). An admin's NRI table is otherwise never edited.
import { EnvhookError } from '../../errors.ts';
import type { BlockTarget } from '../targets.ts';
import { dropInNotRead, type ContainerdConfig, type Reading } from './containerd-config.ts';
import type { ConfigFile } from './containerd-files.ts';
import { mergePlugins } from './containerd-merge.ts';
import { parseToml, table, tableAt } from '../toml.ts';
import { withBlock } from '../block.ts';
import { applyEdit, planKeyEdit, type KeyEdit } from '../key-edit.ts';

export const NRI_PLUGIN = 'io.containerd.nri.v1.nri';
const ENABLE_NRI = '--enable-nri';

export interface NriSwitch {
  block?: BlockTarget;
  edits: KeyEdit[];
  note: string;
}

/** Nothing when NRI is on; else envhook's block, or the edits of the admin's `disable` lines (--enable-nri). */
export function switchNriOn(config: ContainerdConfig, dropIn: string | undefined, enableNri: boolean): NriSwitch {
  if (!config.readings.some(isOff)) {
    const deciders = [
      ...new Set(
        config.readings
          .map(decider)
          .filter((f) => f !== undefined)
          .map((f) => f.path),
      ),
    ];
    const why = deciders.length ? `disable = false in ${deciders.join(', ')}` : "containerd 2.x's default";
    return { edits: [], note: `NRI is on in ${config.root} as containerd reads it (${why})` };
  }
  const setters = [...new Set(config.readings.flatMap((r) => r.files.filter(setsNri)))];
  if (setters.length === 0)
    return { block: enableBlock(config, dropIn), edits: [], note: `NRI is off in ${config.root} as containerd reads it: switched on` };
  if (!enableNri) {
    throw new EnvhookError(
      `${setters[0]!.path} sets [plugins."${NRI_PLUGIN}"] and NRI is off as containerd reads it: set disable = false there, or pass ${ENABLE_NRI} to let install change exactly that key (the file backed up; uninstall puts it back)`,
    );
  }
  const edits = disableEdits(config);
  const where = edits.map((e) => `${e.file}: "${e.from?.trim() ?? '(no disable line)'}" becomes "${e.to.trim()}"`).join('; ');
  return {
    edits,
    note: `NRI is off in ${config.root} as containerd reads it: switched on by changing that one key (${ENABLE_NRI}) in ${where}`,
  };
}

/** 1.x ships NRI off, 2.x on; an explicit `disable` in force decides either way. */
function isOff(r: Reading): boolean {
  return (table(mergePlugins(r.files, r.family), NRI_PLUGIN)?.disable ?? r.family === '1.x') !== false;
}

function setsNri(f: ConfigFile): boolean {
  return tableAt(f.doc, 'plugins', NRI_PLUGIN) !== undefined;
}

/** The file whose `disable` is in force: 1.x takes a plugin's whole table from the last file setting it, 2.x each key. */
function decider(r: Reading): ConfigFile | undefined {
  if (r.family === '1.x') return r.files.findLast(setsNri);
  return r.files.findLast((f) => tableAt(f.doc, 'plugins', NRI_PLUGIN)?.disable !== undefined);
}

/** `disable = false` where each reading takes its `disable` from, until every reading has NRI on. */
function disableEdits(config: ContainerdConfig): KeyEdit[] {
  const edits: KeyEdit[] = [];
  let readings = config.readings;
  for (let r = readings.find(isOff); r; r = readings.find(isOff)) {
    const file = decider(r)!;
    const edit = planKeyEdit(file.path, file.text, ['plugins', NRI_PLUGIN], 'disable', 'false');
    if (!edit || edits.some((e) => e.file === file.path)) {
      throw new EnvhookError(
        `${file.path} sets [plugins."${NRI_PLUGIN}"] in a form ${ENABLE_NRI} cannot change alone (a [plugins."${NRI_PLUGIN}"] header with a disable line): set disable = false there`,
      );
    }
    edits.push(edit);
    const doc = parseToml(applyEdit(file.text, edit)!, file.path);
    readings = readings.map((x) => ({ ...x, files: x.files.map((f) => (f.path === file.path ? { ...f, doc } : f)) }));
  }
  return edits;
}

/** `disable = false` in a file of its own table. */
function enableBlock(config: ContainerdConfig, dropIn: string | undefined): BlockTarget {
  const file = blockFile(config, dropIn);
  const body = blockBody(config, file, [`[plugins.${JSON.stringify(NRI_PLUGIN)}]`, '  disable = false']);
  return {
    file: file.path,
    body,
    mode: 0o644,
    note: `envhook's block goes here: no file sets [plugins."${NRI_PLUGIN}"], so this one table switches NRI on`,
  };
}

/** The file envhook's block goes into: --drop-in, else the root file. */
export function blockFile(config: ContainerdConfig, dropIn: string | undefined): ConfigFile {
  const files = config.readings[0]!.files;
  const file = dropIn === undefined ? files[0]! : files.find((f) => f.path === dropIn);
  if (!file) throw dropInNotRead(dropIn!, config.root);
  return file;
}

/** The block's text: a new (or empty) file gets the config version first; it must parse in its file. */
export function blockBody(config: ContainerdConfig, file: ConfigFile, table: string[]): string {
  const newFile = !file.exists || Object.keys(file.doc).length === 0;
  const body = [...(newFile ? [`version = ${config.version}`, ''] : []), ...table].join('\n') + '\n';
  parseToml(withBlock(file.text, body, file.path), `${file.path} with envhook's block`);
  return body;
}
