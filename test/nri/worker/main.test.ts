// The worker runs only as its supervisor's child: ENVHOOK_NRI_WORKER set by hand (no IPC channel
// to a supervisor, or a role that is not one) is refused with one line, before anything starts.
import t from 'tap';
import { envhook } from '../../helpers/bundle.ts';

const LINE = "envhook: ENVHOOK_NRI_WORKER is internal to envhook nri (its worker's role): unset it\n";

t.test('ENVHOOK_NRI_WORKER set by an admin: exit 1 and the one line, whether the role reads or not', async (t) => {
  for (const role of ['{"name":"envhook","index":"50","preinstalled":false}', 'yes']) {
    const r = envhook(['nri', '--socket', '/nonexistent/nri.sock'], { env: { ENVHOOK_NRI_WORKER: role } });
    t.equal(r.status, 1, `${role}: exit 1`);
    t.equal(r.stderr, LINE, `${role}: the one line`);
    t.equal(r.stdout, '', `${role}: nothing on stdout`);
  }
});
