// One env request for every runtime's e2e test: a fileKeyRef, a $(VAR) value, an optional
// missing key and an envFrom with a prefix, all from the pod's emptyDir `config` (which is
// not mounted into the container: the variables can only come from envhook).
import type { Test } from 'tap';
import { ref } from './inject.ts';

export const CANARY = 'CANARY-e2e-41d7';
export const FILES = { 'config.env': `CONFIG_VAR='HELLO'\nSECRET='${CANARY}'\n` };

export const ENV_ANNOTATIONS = {
  'envhook.io/env': {
    app: [
      { name: 'FROM_FILE', valueFrom: ref('CONFIG_VAR', 'config.env') },
      { name: 'GREETING', value: '$(FROM_FILE) world' },
      { name: 'MAYBE', valueFrom: ref('NOPE', 'config.env', true) },
    ],
  },
  'envhook.io/envFrom': { app: [{ prefix: 'CFG_', fileRef: { volumeName: 'config', path: 'config.env' } }] },
};

/** A request that fails: a missing key that is not optional (and a canary value beside it). */
export const FAILING_ANNOTATIONS = {
  'envhook.io/env': {
    app: [
      { name: 'A', value: CANARY },
      { name: 'X', valueFrom: ref('NOPE', 'config.env') },
    ],
  },
};
export const FAILING_MESSAGE = 'volume "config": file "config.env": key "NOPE" not found';

/** Annotation values as the runtime carries them: JSON text. */
export { rawAnnotations as raw } from '../../../scripts/kubelet-pod.ts';

/** The variables ENV_ANNOTATIONS inject, as the container sees them. */
export function checkInjected(t: Test, env: Map<string, string>): void {
  t.equal(env.get('FROM_FILE'), 'HELLO', 'fileKeyRef');
  t.equal(env.get('GREETING'), 'HELLO world', '$(VAR) expansion');
  t.equal(env.get('CFG_CONFIG_VAR'), 'HELLO', 'envFrom with prefix');
  t.equal(env.get('CFG_SECRET'), CANARY, 'envFrom, every variable');
  t.notOk(env.has('MAYBE'), 'optional and missing: not set');
}
