// containerd 1.7.24 (Debian trixie, NRI 0.6.1): a DaemonSet rollout of envhook nri under pod
// churn, in both orders (test/e2e/nri-handover-suite.ts).
import t from 'tap';
import { handoverSuite } from './nri-handover-suite.ts';

t.setTimeout(600_000);
handoverSuite('1.7');
