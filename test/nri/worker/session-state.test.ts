// The owner watcher is told in the session's turn; should it throw, the call is still answered
// and the failure logged.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { createLogger } from '../../../src/log.ts';
import { silentObserver } from '../../../src/nri/worker/observer.ts';
import { newSessionState, notifyPods, statusLine } from '../../../src/nri/worker/session-state.ts';
import { EnvhookError } from '../../../src/errors.ts';

t.test('a watcher that throws: logged, not thrown; no watcher: nothing called', async (t) => {
  const file = path.join(t.testdir(), 'log');
  const base = {
    log: createLogger(file, 'info'),
    handler: () => ({ env: [], removeEnv: [], annotations: {} }),
    observer: silentObserver,
    configured: () => {},
    listed: () => {},
  };
  const throwing = newSessionState({
    ...base,
    pods: {
      synchronized: () => {},
      created: () => {},
      podEnded: () => {
        throw new Error('boom');
      },
    },
  });
  t.doesNotThrow(() => notifyPods(throwing, 'StopPodSandbox', (pods) => pods.podEnded({} as never, 'stop')));
  t.match(fs.readFileSync(file, 'utf8'), /"call":"StopPodSandbox".*"msg":"owner watcher failed"/);
  let called = false;
  notifyPods(newSessionState({ ...base, pods: undefined }), 'Synchronize', () => (called = true));
  t.equal(called, false);
});

t.test("a failed call's status message is envhook's one line", async (t) => {
  t.equal(statusLine(new EnvhookError('volume "v" not found')), 'envhook: volume "v" not found');
});
