// Volumes of the pod, by name, under <pod>/volumes/kubernetes.io~<plugin>/<name> (docs/design.md#finding-volumes).
// An admin's --volume NAME=DIR overrides the lookup (direct use and tests).
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../errors.ts';
import type { PodDir } from './pod.ts';
import { didYouMean } from '../nearest.ts';

export type VolumeKind = 'emptyDir' | 'atomic' | 'env';

const EMPTY_DIR = 'kubernetes.io~empty-dir';
/** The plugins whose volumes the kubelet lays out with its atomic writer (`..data`). */
export const ATOMIC_PLUGINS = ['kubernetes.io~configmap', 'kubernetes.io~secret', 'kubernetes.io~projected', 'kubernetes.io~downward-api'];
// A CSI volume's files are in `mount` below its directory (the kubelet keeps vol_data.json
// beside it). Only an inline (ephemeral) CSI volume is named after the pod's volume, as the
// secrets-store driver's are; a PersistentVolume's directory is named after the PV.
const CSI = 'kubernetes.io~csi';
const PLUGINS: Record<VolumeKind, readonly string[]> = {
  emptyDir: [EMPTY_DIR],
  atomic: ATOMIC_PLUGINS,
  env: [EMPTY_DIR, ...ATOMIC_PLUGINS, CSI],
};
const KIND_TEXT: Record<VolumeKind, string> = {
  emptyDir: 'an emptyDir',
  atomic: 'a configMap, secret, projected or downwardAPI volume',
  env: 'an emptyDir, configMap, secret, projected, downwardAPI or CSI volume',
};
/** Kubernetes volume names are DNS labels: this also keeps `/`, `..` and NUL out. */
const VOLUME_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A volume env is read from (docs/design.md#env-from-other-volumes). */
interface EnvVolume {
  /** Its files' directory; for a CSI volume it may be missing (not mounted yet). */
  dir: string;
  /**
   * Read through the atomic writer's `..data` where there is one (fs/datadir.ts): every volume
   * but an emptyDir, whose files KEP-3721 reads as they are. A --volume directory counts as one.
   */
  viaData: boolean;
}

export interface VolumeLocator {
  /** Host directory of volume `name`, which must be of `kind`. */
  find(name: string, kind: VolumeKind): string;
  /** Volume `name` as an env source: an emptyDir, atomic-writer or CSI volume. */
  envSource(name: string): EnvVolume;
}

export interface VolumeSources {
  pod: PodDir | undefined;
  overrides: ReadonlyMap<string, string>;
}

/**
 * One start's locator: a volume found is remembered for the rest of the start (its env files
 * and its owners look it up once, not once a file); a volume not found is looked for each time.
 */
export function createVolumeLocator(sources: VolumeSources): VolumeLocator {
  const found = new Map<string, string>();
  const envFound = new Map<string, EnvVolume>();
  return {
    find(name, kind) {
      const key = `${kind}/${name}`;
      let dir = found.get(key);
      if (dir === undefined) found.set(key, (dir = findVolume(sources, name, kind)));
      return dir;
    },
    envSource(name) {
      let v = envFound.get(name);
      if (v === undefined) envFound.set(name, (v = findEnvVolume(sources, name)));
      return v;
    },
  };
}

export function findVolume(sources: VolumeSources, name: string, kind: VolumeKind): string {
  return lookup(sources, name, kind).dir;
}

function findEnvVolume(sources: VolumeSources, name: string): EnvVolume {
  const { dir, plugin } = lookup(sources, name, 'env');
  if (plugin === CSI) return { dir: path.join(dir, 'mount'), viaData: true };
  return { dir, viaData: plugin !== EMPTY_DIR };
}

/** The volume's directory and its plugin directory (undefined for a --volume override). */
function lookup({ pod, overrides }: VolumeSources, name: string, kind: VolumeKind): { dir: string; plugin: string | undefined } {
  const override = overrides.get(name);
  if (override !== undefined) return { dir: path.resolve(override), plugin: undefined };
  if (!VOLUME_NAME.test(name)) throw new EnvhookError(`volume name ${JSON.stringify(name)} is not a valid volume name`);
  if (!pod)
    throw new EnvhookError(
      `volume "${name}" not found: no pod directory (no kubelet-made mount in config.json; use --pod-dir or --volume)`,
    );
  for (const plugin of PLUGINS[kind]) {
    const dir = path.join(pod.dir, 'volumes', plugin, name);
    if (isRealDir(dir)) return { dir, plugin };
  }
  if (foundElsewhere(pod.dir, name)) throw new EnvhookError(`volume "${name}" is not ${KIND_TEXT[kind]}`);
  // A misspelt name: the nearest volume the kubelet set up for the pod, as lint names it.
  const near = didYouMean(name, [...podVolumeNames(pod.dir), ...overrides.keys()]);
  // The likely cause for an env source: no container mounts the volume (envhook's containers
  // need not), and the kubelet sets up only the volumes some container of the pod mounts.
  if (kind === 'env') throw new EnvhookError(`volume "${name}" not found in the pod${near}: ${NOT_SET_UP}`);
  throw new EnvhookError(`volume "${name}" not found${near}`);
}

/** The names of the volumes the kubelet set up under the pod (any plugin): failure path only. */
function podVolumeNames(podDir: string): Set<string> {
  const names = new Set<string>();
  const volumes = path.join(podDir, 'volumes');
  for (const plugin of readNames(volumes)) for (const name of readNames(path.join(volumes, plugin))) names.add(name);
  return names;
}

function readNames(dir: string): string[] {
  try {
    return fs.readdirSync(dir).slice(0, 1024);
  } catch {
    return [];
  }
}

/** Why an env source's volume is not in the pod directory, and what to do (lint says the same). */
export const NOT_SET_UP =
  "the kubelet sets up only volumes that a container of the pod mounts; mount it in one of the pod's containers (the init container is enough)";

function isRealDir(dir: string): boolean {
  return fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() === true;
}

function foundElsewhere(podDir: string, name: string): boolean {
  let plugins: string[];
  try {
    plugins = fs.readdirSync(path.join(podDir, 'volumes'));
  } catch {
    return false;
  }
  return plugins.some((p) => fs.lstatSync(path.join(podDir, 'volumes', p, name), { throwIfNoEntry: false }) !== undefined);
}

/** Parses repeated `--volume NAME=DIR` flags. */
export function parseVolumeFlags(flags: readonly string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const flag of flags) {
    const eq = flag.indexOf('=');
    if (eq <= 0 || eq === flag.length - 1) throw new EnvhookError(`--volume ${JSON.stringify(flag)}: expected NAME=DIR`);
    map.set(flag.slice(0, eq), flag.slice(eq + 1));
  }
  return map;
}
