// containerd 2.1.9 (Debian sid, NRI 0.8.0): envhook install upgrades the pre-installed plugin
// without a containerd restart, under pod churn (test/e2e/nri-upgrade-suite.ts).
import t from 'tap';
import { upgradeSuite } from './nri-upgrade-suite.ts';

t.setTimeout(600_000);
upgradeSuite('2.1');
