// containerd 2.1.9 (Debian sid, NRI 0.8.0): a DaemonSet rollout of envhook nri under pod churn,
// in both orders (test/e2e/nri-handover-suite.ts).
import t from 'tap';
import { handoverSuite } from './nri-handover-suite.ts';

t.setTimeout(600_000);
handoverSuite('2.1');
