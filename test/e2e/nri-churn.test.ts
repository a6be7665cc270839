// containerd 2.1.9 (Debian sid, NRI 0.8.0): envhook nri killed and stopped under pod churn,
// pre-installed and external (test/e2e/nri-churn-suite.ts). The counts keep the suite within
// CI's time on 2 cores (every kill's checks are the same; more kills only find rarer races):
// ENVHOOK_CHURN_KILLS=50 runs a soak of 50 kills per case.
import t from 'tap';
import { churnSuite } from './nri-churn-suite.ts';

t.setTimeout(1_800_000);
churnSuite('2.1', { preinstalled: 4, external: 2 });
