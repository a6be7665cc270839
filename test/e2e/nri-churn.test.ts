// containerd 2.1.9 (Debian sid, NRI 0.8.0): envhook nri killed and stopped under pod churn,
// pre-installed and external (test/e2e/nri-churn-suite.ts). The counts keep the suite within
// CI's time on 2 cores: every kill's checks are the same, and each case has at least two
// replacements (its kills and the SIGSTOP), so the checks across registrations (one at a time,
// every exit a kill or a hang, each missed container reported once) see a sequence of them;
// more kills only find rarer races, which ENVHOOK_CHURN_KILLS=50 (a soak of 50 kills per case)
// is for.
import t from 'tap';
import { churnSuite } from './nri-churn-suite.ts';

t.setTimeout(1_800_000);
churnSuite('2.1', { preinstalled: 2, external: 1 });
