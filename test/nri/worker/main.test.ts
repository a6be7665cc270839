// The worker runs only as its supervisor's child: ENVHOOK_NRI_WORKER set by hand (no IPC channel
// to a supervisor, or a role that is not one) is refused with one line, before anything starts; and
// it never outlives its supervisor.
import t from 'tap';
import { envhook } from '../../helpers/bundle.ts';
import { startFakeRuntime } from '../../helpers/nri/runtime.ts';
import { alive, startNriProcess } from '../../helpers/nri/process.ts';
import { waitFor } from '../../helpers/wait.ts';

const LINE = "envhook: ENVHOOK_NRI_WORKER is internal to envhook nri (its worker's role): unset it\n";

t.test('ENVHOOK_NRI_WORKER set by an admin: exit 1 and the one line, whether the role reads or not', async (t) => {
  for (const role of ['{"name":"envhook","index":"50","preinstalled":false}', 'yes']) {
    const r = envhook(['nri', '--socket', '/nonexistent/nri.sock'], { env: { ENVHOOK_NRI_WORKER: role } });
    t.equal(r.status, 1, `${role}: exit 1`);
    t.equal(r.stderr, LINE, `${role}: the one line`);
    t.equal(r.stdout, '', `${role}: nothing on stdout`);
  }
});

t.test('its supervisor killed (SIGKILL), the worker ends: the runtime sees its connection close and no worker is left', async (t) => {
  const rt = await startFakeRuntime();
  t.teardown(() => rt.close());
  const p = startNriProcess(['--socket', rt.socketPath], { dir: t.testdir() });
  t.teardown(() => p.stop());
  const peer = await rt.nextPlugin();
  const { workerPid } = await p.waitForStatus((s) => s.connected && s.workerPid !== undefined);
  p.child.kill('SIGKILL');
  await p.exited;
  await waitFor(() => !alive(workerPid!), 10_000, 'the worker to end after its supervisor was killed');
  t.equal(await peer.closed.then(() => 'closed'), 'closed', "the runtime's connection closed");
});
