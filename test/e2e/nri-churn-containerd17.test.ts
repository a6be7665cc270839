// containerd 1.7.24 (Debian trixie, NRI 0.6.1): envhook nri killed and stopped under pod churn,
// pre-installed and external (test/e2e/nri-churn-suite.ts); fewer kills than on 2.1.9, whose
// suite is the same (ENVHOOK_CHURN_KILLS overrides both for a soak).
import t from 'tap';
import { churnSuite } from './nri-churn-suite.ts';

t.setTimeout(1_800_000);
churnSuite('1.7', { preinstalled: 2, external: 1 });
