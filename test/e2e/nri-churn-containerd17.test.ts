// containerd 1.7.24 (Debian trixie, NRI 0.6.1): envhook nri killed and stopped under pod churn,
// pre-installed and external (test/e2e/nri-churn-suite.ts); one kill and the SIGSTOP a case, the
// least that still gives two replacements (test/e2e/nri-churn.test.ts says why that is enough;
// ENVHOOK_CHURN_KILLS overrides both files for a soak).
import t from 'tap';
import { churnSuite } from './nri-churn-suite.ts';

t.setTimeout(1_800_000);
churnSuite('1.7', { preinstalled: 1, external: 1 });
