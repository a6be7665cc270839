// The env requests of the CRI suites: what a kubelet-managed pod asks envhook for, with the
// service variables the kubelet would put in CreateContainer's env, and a canary value that
// must never show in an error, a status or a log line.
import type { Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { parseEnvOutput } from '../bundle.ts';
import type { KubeletPod } from './pod.ts';
import type { CriContainerd } from './containerd.ts';
import { EXEC_SIDECAR } from '../../../src/bundle/exec-sidecar.ts';
import { procEnviron } from '../proc.ts';
import { raw } from '../shim/injected.ts';

export { raw };
export const CANARY = 'CANARY-cri-6b1e';

export const DB_FILES = { 'db.env': `DB_HOST='db.internal'\nDB_PORT='5432'\nSECRET='${CANARY}'\n` };

const ref = (key: string, optional?: boolean) => ({
  fileKeyRef: { volumeName: 'config', path: 'db.env', key, ...(optional ? { optional } : {}) },
});

/** Pod annotations for container `app`: fileKeyRef, envFrom with prefix, $(VAR), service links off. */
export const APP_ANNOTATIONS = {
  'envhook.io/envFrom': { app: [{ prefix: 'CFG_', fileRef: { volumeName: 'config', path: 'db.env' } }] },
  'envhook.io/env': {
    app: [
      { name: 'DB', valueFrom: ref('DB_HOST') },
      { name: 'MAYBE', valueFrom: ref('NOPE', true) },
      { name: 'URL', value: 'postgres://$(DB):$(CFG_DB_PORT)/app' },
      { name: 'LITERAL', value: '$(NOPE) and $$' },
    ],
  },
  'envhook.io/serviceLinks': { app: false },
};

/** KEP-5936 for a pod with the secret volume `tls`. */
export const OWNERS_ANNOTATION = { 'envhook.io/volumeOwners': [{ volume: 'tls', defaultUser: 1000 }] };

/** Variables the kubelet makes for the services `redis-master` and `kubernetes`. */
export const SERVICE_ENV: Record<string, string> = {
  REDIS_MASTER_SERVICE_HOST: '10.96.0.11',
  REDIS_MASTER_SERVICE_PORT: '6379',
  REDIS_MASTER_PORT: 'tcp://10.96.0.11:6379',
  REDIS_MASTER_PORT_6379_TCP: 'tcp://10.96.0.11:6379',
  REDIS_MASTER_PORT_6379_TCP_PROTO: 'tcp',
  REDIS_MASTER_PORT_6379_TCP_PORT: '6379',
  REDIS_MASTER_PORT_6379_TCP_ADDR: '10.96.0.11',
  KUBERNETES_SERVICE_HOST: '10.96.0.1',
  KUBERNETES_SERVICE_PORT: '443',
  KUBERNETES_PORT: 'tcp://10.96.0.1:443',
  KUBERNETES_PORT_443_TCP: 'tcp://10.96.0.1:443',
  KUBERNETES_PORT_443_TCP_PROTO: 'tcp',
  KUBERNETES_PORT_443_TCP_PORT: '443',
  KUBERNETES_PORT_443_TCP_ADDR: '10.96.0.1',
};

/** A start that fails: a key missing from the file, not optional (a canary value beside it). */
export const FAILING = {
  annotations: {
    'envhook.io/env': {
      app: [
        { name: 'A', value: CANARY },
        { name: 'X', valueFrom: ref('NOPE') },
      ],
    },
  },
  message: 'volume "config": file "db.env": key "NOPE" not found',
};

/** What APP_ANNOTATIONS give container `app` (started with SERVICE_ENV and POD_ENV=kept), feature by feature. */
export const APP_CHECKS: Record<string, (t: Test, env: Map<string, string>) => void> = {
  fileKeyRef(t, env) {
    t.equal(env.get('DB'), 'db.internal');
    t.notOk(env.has('MAYBE'), 'optional, key missing: not set');
  },
  'envFrom with prefix'(t, env) {
    t.equal(env.get('CFG_DB_HOST'), 'db.internal');
    t.equal(env.get('CFG_DB_PORT'), '5432');
    t.equal(env.get('CFG_SECRET'), CANARY, 'every variable of the file');
  },
  '$(VAR)'(t, env) {
    t.equal(env.get('URL'), 'postgres://db.internal:5432/app', 'references to earlier entries expanded');
    t.equal(env.get('LITERAL'), '$(NOPE) and $', 'an undefined reference stays; $$ gives $');
  },
  'serviceLinks false'(t, env) {
    for (const k of Object.keys(SERVICE_ENV).filter((k) => k.startsWith('REDIS_'))) t.notOk(env.has(k), `${k} removed`);
    t.equal(env.get('KUBERNETES_SERVICE_HOST'), '10.96.0.1', 'the kubernetes service stays');
    t.equal(env.get('KUBERNETES_PORT_443_TCP_PORT'), '443');
    t.equal(env.get('POD_ENV'), 'kept', "the pod's own env stays");
  },
};

/**
 * Runs `check` on the env of PID 1 (/proc/PID/environ, the PID from ContainerStatus) and on the
 * env of a process started by ExecSync (as kubectl exec and exec probes start theirs).
 */
export async function onPid1AndExec(t: Test, pod: KubeletPod, id: string, check: (t: Test, env: Map<string, string>) => void) {
  const pid1 = procEnviron(await pod.pid(id));
  await t.test('PID 1', async (t) => check(t, pid1));
  const r = await pod.execSync(id, ['env']);
  await t.test('ExecSync', async (t) => {
    t.equal(r.exitCode, 0, 'ExecSync env exits 0');
    check(t, parseEnvOutput(r.stdout));
  });
}

/** The places on the node docs/pods.md#volumes-env-is-read-from names, as its table words them. */
const WHERE = {
  inspect: 'crictl inspect: runtimeSpec.process.env of ContainerStatus verbose',
  config: "the bundle's config.json",
  sidecar: 'envhook-exec.data in the bundle',
  environ: '/proc/<pid>/environ of PID 1',
} as const;

/** The first words of each row of docs/pods.md's table of places, for each place of WHERE. */
const ROWS: Record<keyof typeof WHERE, string> = {
  inspect: '`crictl inspect`',
  config: "the bundle's `config.json`",
  sidecar: '`envhook-exec.data`',
  environ: '`/proc/<pid>/environ`',
};

/**
 * What docs/pods.md's table says of each place of WHERE for `mode` (its NRI column, which is
 * also the guard handler's with the plugin registered, or its shim column): a cell that starts
 * with "yes" or "**yes**" is true, one that starts with "no" false.
 */
export function documentedVisibility(mode: 'nri' | 'shim'): Record<string, boolean> {
  const page = fs.readFileSync(path.resolve(import.meta.dirname, '../../../docs/pods.md'), 'utf8');
  const rows = page.split('\n').filter((l) => l.startsWith('| '));
  const out: Record<string, boolean> = {};
  for (const [key, start] of Object.entries(ROWS) as [keyof typeof WHERE, string][]) {
    const row = rows.find((l) => l.startsWith(`| ${start}`));
    if (!row) throw new Error(`docs/pods.md: no table row starting ${start}`);
    const cell = row.split(' | ')[mode === 'nri' ? 1 : 2]!.replace(/^\*\*/, '');
    if (!/^(yes|no)\b/.test(cell)) throw new Error(`docs/pods.md: the ${mode} cell of ${start} says neither yes nor no`);
    out[WHERE[key]] = cell.startsWith('yes');
  }
  return out;
}

/**
 * Where the resolved value of APP_ANNOTATIONS' `DB` (db.internal, read from the env file) can
 * be read on the node for running container `id`: true or false for each place of WHERE.
 */
export async function whereVisible(c: CriContainerd, pod: KubeletPod, id: string): Promise<Record<string, boolean>> {
  const bundle = path.join(c.paths.state, 'io.containerd.runtime.v2.task/k8s.io', id);
  const entry = 'DB=db.internal';
  const config = JSON.parse(fs.readFileSync(path.join(bundle, 'config.json'), 'utf8')) as { process: { env: string[] } };
  const sidecar = path.join(bundle, EXEC_SIDECAR);
  return {
    [WHERE.inspect]: (await pod.specEnv(id)).includes(entry),
    [WHERE.config]: config.process.env.includes(entry),
    [WHERE.sidecar]: fs.existsSync(sidecar) && fs.readFileSync(sidecar, 'utf8').includes('db.internal'),
    [WHERE.environ]: procEnviron(await pod.pid(id)).get('DB') === 'db.internal',
  };
}
