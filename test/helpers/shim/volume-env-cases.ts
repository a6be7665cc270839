// The cases of env from secret, configMap, projected and CSI volumes (docs/design.md#env-from-other-volumes), shared
// by the CRI test (test/e2e/cri-volume-env.test.ts) and the runc one (test/e2e/runc-volume-env.test.ts):
// a pod's volumes, annotations asking for fileKeyRef, fileRef and envFrom (fileRef, volumeRef)
// from each, what container `app` must see, and hostile layouts with the line each fails with.
import type { Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { atomicVolumeDir, type Pod } from '../../../scripts/kubelet-pod.ts';

export const CANARY = 'CANARY-volenv-8c2e';

export const VOLUMES = {
  secrets: { db: { 'db.env': `DB_USER='app-${CANARY}'\n`, password: `${CANARY}-pw\n` } },
  configMaps: { cfg: { 'app.env': "MODE='prod'\n", 'log-level': 'debug\n' } },
  projected: { proj: { 'token.env': "TOKEN_KIND='projected'\n", token: `${CANARY}-token` } },
  csi: { vault: { 'db.env': "VAULT_ADDR='https://vault:8200'\n", 'db-password': `${CANARY}-vault\n` } },
};
const key = (volumeName: string, p: string, k: string) => ({ fileKeyRef: { volumeName, path: p, key: k } });
const file = (volumeName: string, p: string) => ({ fileRef: { volumeName, path: p } });
export const ANNOTATIONS = {
  'envhook.io/env': {
    app: [
      { name: 'S_USER', valueFrom: key('db', 'db.env', 'DB_USER') },
      { name: 'S_PW', valueFrom: file('db', 'password') },
      { name: 'C_MODE', valueFrom: key('cfg', 'app.env', 'MODE') },
      { name: 'C_LEVEL', valueFrom: file('cfg', 'log-level') },
      { name: 'P_KIND', valueFrom: key('proj', 'token.env', 'TOKEN_KIND') },
      { name: 'P_TOKEN', valueFrom: file('proj', 'token') },
      { name: 'V_ADDR', valueFrom: key('vault', 'db.env', 'VAULT_ADDR') },
      { name: 'V_PW', valueFrom: file('vault', 'db-password') },
      { name: 'DSN', value: 'postgres://$(S_USER):$(V_PW)@db/app' },
    ],
  },
  'envhook.io/envFrom': {
    app: [
      { prefix: 'SF_', fileRef: { volumeName: 'db', path: 'db.env' } },
      { prefix: 'SD_', volumeRef: { volumeName: 'db' } },
      { prefix: 'CD_', volumeRef: { volumeName: 'cfg' } },
      { prefix: 'PF_', fileRef: { volumeName: 'proj', path: 'token.env' } },
      { prefix: 'VD_', volumeRef: { volumeName: 'vault' } },
    ],
  },
};
const EXPECTED: Record<string, string> = {
  S_USER: `app-${CANARY}`,
  S_PW: `${CANARY}-pw`,
  C_MODE: 'prod',
  C_LEVEL: 'debug',
  P_KIND: 'projected',
  P_TOKEN: `${CANARY}-token`,
  V_ADDR: 'https://vault:8200',
  V_PW: `${CANARY}-vault`,
  DSN: `postgres://app-${CANARY}:${CANARY}-vault@db/app`,
  SF_DB_USER: `app-${CANARY}`,
  'SD_db.env': `DB_USER='app-${CANARY}'`,
  SD_password: `${CANARY}-pw`,
  'CD_app.env': "MODE='prod'",
  'CD_log-level': 'debug',
  PF_TOKEN_KIND: 'projected',
  'VD_db.env': "VAULT_ADDR='https://vault:8200'",
  'VD_db-password': `${CANARY}-vault`,
  POD_ENV: 'kept',
};
export const check = (t: Test, env: Map<string, string>) => {
  for (const [name, value] of Object.entries(EXPECTED)) t.equal(env.get(name), value, name);
};

/** A secret volume laid out by the kubelet, then made hostile before the container is created. */
export const HOSTILE = { hostile: { ok: 'ok\n', link: 'x', fifo: 'x', big: 'x' } };
export function makeHostile(pod: Pod, outside: string): void {
  const dir = atomicVolumeDir(pod, 'secret', 'hostile');
  const ts = path.join(dir, fs.readlinkSync(path.join(dir, '..data')));
  for (const f of ['link', 'fifo', 'big']) fs.rmSync(path.join(ts, f));
  fs.symlinkSync(outside, path.join(ts, 'link'));
  execFileSync('mkfifo', [path.join(ts, 'fifo')]);
  fs.writeFileSync(path.join(ts, 'big'), `${CANARY}\n`.repeat(7000));
}
export const FAILURES: [string, Record<string, unknown>, string][] = [
  ['missing file', { 'envhook.io/env': { app: [{ name: 'A', valueFrom: file('db', 'nope') }] } }, 'volume "db": file "nope": not found'],
  [
    'symlink out of the volume',
    { 'envhook.io/env': { app: [{ name: 'A', valueFrom: file('hostile', 'link') }] } },
    'volume "hostile": file "link": is a symbolic link',
  ],
  [
    'FIFO',
    { 'envhook.io/env': { app: [{ name: 'A', valueFrom: key('hostile', 'fifo', 'A') }] } },
    'volume "hostile": file "fifo": is a FIFO',
  ],
  [
    'too large',
    { 'envhook.io/envFrom': { app: [{ volumeRef: { volumeName: 'hostile' } }] } },
    'volume "hostile": file "big": larger than 65536 bytes',
  ],
];
