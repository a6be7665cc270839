// containerd 1.7.24 (Debian trixie, NRI 0.6.1): envhook install upgrades the pre-installed plugin
// without a containerd restart, under pod churn (test/e2e/nri-upgrade-suite.ts).
import t from 'tap';
import { upgradeSuite } from './nri-upgrade-suite.ts';

t.setTimeout(600_000);
upgradeSuite('1.7');
