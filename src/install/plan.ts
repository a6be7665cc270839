// install and uninstall as plans: a list of file changes computed from the disk and the state
// file, applied in order (executables, hooks.d files, configs, state) or printed (--dry-run).
import { splitBlock, withBlock } from './block.ts';
import { backupPath, makeLayout, type Layout, type Runtime } from './layout.ts';
import { readHost, sha256, type Change } from './fsops.ts';
import { ownedByOther, readState, recordedHash, stateChange, type State } from './state.ts';
import { executableTargets, hookTemplates, type SourceOptions } from './artifacts.ts';
import type { RuntimePlan } from './targets.ts';
import { containerdPlan, type ContainerdOptions } from './containerd-plan.ts';
import { crioPlan } from './crio.ts';
import { podmanPlan } from './podman.ts';
import { settingsTarget, type SettingsFlags } from './settings-file.ts';
import { containerdNriPlan, nriIndex } from './containerd-nri.ts';
import { CRIO_NRI_DROP_IN, crioNriPlan } from './crio-nri.ts';
import { installKey, type InstallMode } from './mode.ts';
import { EnvhookError } from '../errors.ts';

export interface InstallOptions extends SourceOptions, ContainerdOptions, SettingsFlags {
  runtime: Runtime;
  root?: string | undefined;
  prefix?: string | undefined;
  config?: string | undefined;
  /** CRI-O only: the hooks directory CRI-O reads (default /usr/share/containers/oci/hooks.d). */
  hooksDir?: string | undefined;
  /** CRI-O only: the crio binary for the check after install (default: crio on PATH). */
  crio?: string | undefined;
  /** shim (the runtime handler, default) or nri (the resident plugin). */
  mode?: InstallMode | undefined;
  /** nri: the plugin's two-digit index. */
  index?: string | undefined;
  /** nri: make envhook a required plugin of NRI's default validator. */
  nriRequired?: boolean | undefined;
}

export interface Plan {
  layout: Layout;
  changes: Change[];
  next: string[];
  notes: string[];
  /** The runtime's own reading of the written files (install only). */
  verify?: (() => string) | undefined;
}

export function planInstall(opts: InstallOptions): Plan {
  const layout = makeLayout(opts.runtime, nriDefaults(opts));
  const key = installKey(opts.runtime, opts.mode);
  const state = readState(layout);
  const stateBefore = readHost(layout, layout.state);
  const rp = runtimePlan(layout, opts);
  // the settings before the registration that makes the runtime run the front
  const settings = settingsTarget(layout, opts, state);
  const files = [...executableTargets(layout, opts), ...(settings ? [settings] : []), ...rp.files];
  const changes: Change[] = files.map((t) => {
    const before = readHost(layout, t.file);
    // an existing file that envhook did not write (or that was edited since) is the admin's
    const foreign = before !== undefined && !before.equals(t.content) && !recordedHash(state, t.file).includes(sha256(before));
    return { file: t.file, before, after: t.content, mode: t.mode, backup: foreign, ...(foreign ? { note: 'this file was not written by envhook' } : {}) };
  });
  for (const b of rp.blocks) {
    // one envhook block a file: another install's block there would be overwritten
    const other = Object.entries(state.runtimes).find(([k, rec]) => k !== key && rec?.blocks.includes(b.file));
    if (other) throw new EnvhookError(`${b.file} carries the envhook block of the ${other[0]} install: name another file with --drop-in`);
    const before = readHost(layout, b.file);
    const text = before?.toString('utf8') ?? '';
    const after = Buffer.from(withBlock(text, b.body, b.file));
    // the first install saves the admin's file; later ones only rewrite the block
    // why the block goes there: said when it is written, not on a reinstall that changes nothing
    const note = b.note && !(before && before.equals(after)) ? { note: b.note } : {};
    changes.push({ file: b.file, before, after, mode: b.mode, backup: before !== undefined && splitBlock(text, b.file).block === undefined, ...note });
  }
  // a block the previous install put in another file (the layout changed since): taken out
  for (const file of state.runtimes[key]?.blocks ?? []) {
    if (!rp.blocks.some((b) => b.file === file)) changes.push(removeBlock(layout, file));
  }
  // files the previous install of this runtime wrote and this one does not (the bundle, once a
  // single executable replaces it): removed as uninstall would, unless another runtime uses them,
  // and after the new files are in place
  const previous = state.runtimes[key]?.files ?? {};
  for (const [file, hash] of Object.entries(previous).reverse()) {
    if (files.some((t) => t.file === file) || ownedByOther(state, key, file)) continue;
    changes.push(removeFile(layout, file, hash));
  }
  const next: State = { version: 1, runtimes: { ...state.runtimes } };
  next.runtimes[key] = {
    config: layout.config,
    files: Object.fromEntries(files.map((t) => [t.file, sha256(t.content)])),
    blocks: rp.blocks.map((b) => b.file),
  };
  changes.push(stateChange(layout, next, stateBefore));
  return { layout, changes, next: rp.next, notes: rp.notes ?? [], verify: rp.verify };
}

function runtimePlan(layout: Layout, opts: InstallOptions): RuntimePlan {
  if (opts.nriRequired && opts.mode !== 'nri') throw new EnvhookError('--nri-required is only valid with --mode nri (it makes the NRI plugin a required one)');
  if (opts.mode === 'nri') {
    if (opts.runtime === 'containerd') return containerdNriPlan(layout, opts);
    if (opts.runtime === 'crio') return crioNriPlan(layout, nriIndex(opts.index), opts.crio, !!opts.nriRequired);
    throw new EnvhookError('Podman has no NRI: install with --mode shim');
  }
  switch (opts.runtime) {
    case 'containerd':
      return containerdPlan(layout, opts);
    case 'crio':
      return crioPlan(layout, hookTemplates(opts), opts.hooksDir, opts.crio);
    case 'podman':
      return podmanPlan(layout, hookTemplates(opts));
  }
}

/** CRI-O's NRI drop-in has a name of its own: the runtime handler's stays where it is. */
function nriDefaults<T extends Pick<InstallOptions, 'runtime' | 'mode' | 'config'>>(opts: T): T {
  return opts.runtime === 'crio' && opts.mode === 'nri' && opts.config === undefined ? { ...opts, config: CRIO_NRI_DROP_IN } : opts;
}

export function planUninstall(opts: Pick<InstallOptions, 'runtime' | 'root' | 'prefix' | 'mode'>): Plan {
  const layout = makeLayout(opts.runtime, opts);
  const key = installKey(opts.runtime, opts.mode);
  const state = readState(layout);
  const stateBefore = readHost(layout, layout.state);
  const rec = state.runtimes[key];
  if (!rec) return { layout, changes: [], next: [], notes: [] };
  const changes: Change[] = [];
  // configs and hooks.d files first, the executables they name last: the reverse of install
  for (const file of rec.blocks) changes.push(removeBlock(layout, file));
  for (const [file, hash] of Object.entries(rec.files).reverse()) {
    if (ownedByOther(state, key, file)) continue;
    changes.push(removeFile(layout, file, hash));
  }
  const next: State = { version: 1, runtimes: { ...state.runtimes } };
  delete next.runtimes[key];
  changes.push(stateChange(layout, next, stateBefore));
  return { layout, changes, next: [], notes: [] };
}

function removeFile(layout: Layout, file: string, hash: string): Change {
  const before = readHost(layout, file);
  const backup = readHost(layout, backupPath(layout, file));
  if (before !== undefined && sha256(before) !== hash) {
    return { file, before, after: before, mode: 0o644, note: `changed since install: left in place${backup ? `; the original is in ${backupPath(layout, file)}` : ''}` };
  }
  // put back what install replaced, if anything
  return { file, before, after: backup, mode: 0o644, dropBackup: backup !== undefined };
}

function removeBlock(layout: Layout, file: string): Change {
  const before = readHost(layout, file);
  const backup = readHost(layout, backupPath(layout, file));
  if (before === undefined) return { file, before, after: undefined, mode: 0o644, dropBackup: backup !== undefined };
  const { rest, block } = splitBlock(before.toString('utf8'), file);
  if (block === undefined) return { file, before, after: before, mode: 0o644 };
  if (backup !== undefined) {
    // byte for byte: the backup, unless the admin changed the file since install
    const same = backup.toString('utf8').replace(/\n+$/, '') === rest.replace(/\n+$/, '');
    if (same) return { file, before, after: backup, mode: 0o644, dropBackup: true };
    return { file, before, after: Buffer.from(rest), mode: 0o644, note: `changed since install: only envhook's block removed; the original is in ${backupPath(layout, file)}` };
  }
  // no backup: install created the file, and nothing but the block is in it
  return { file, before, after: rest.trim() === '' ? undefined : Buffer.from(rest), mode: 0o644 };
}
