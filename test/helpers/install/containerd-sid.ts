// containerd 2.x for the install tests: Debian sid's package, fetched with apt-get into a cache
// (scripts/debian-sid.mjs; ENVHOOK_SID_CACHE reuses one) and run from there, never installed.
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from '../bundle.ts';

type SidModule = { sidPackage(name: string): string; sidVersion(name: string): string };

/** The sid containerd binary, or a reason it is missing (for a skip message). */
export async function sidContainerd(): Promise<{ bin: string; version: string } | { missing: string }> {
  const specifier = path.join(REPO, 'scripts/debian-sid.mjs');
  const sid = (await import(specifier)) as SidModule;
  try {
    const bin = path.join(sid.sidPackage('containerd'), 'usr/bin/containerd');
    if (!fs.existsSync(bin)) return { missing: `no usr/bin/containerd in the sid containerd package` };
    return { bin, version: sid.sidVersion('containerd') };
  } catch (err) {
    return { missing: `containerd 2.x from Debian sid not available: ${(err as Error).message}` };
  }
}
