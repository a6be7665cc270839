// The kubelet's view of envhook on containerd 1.6 (Debian's) with the CRI plugin, through the
// `envhook` runtime handler: the cases of test/e2e/cri-shim-suite.ts.
import t from 'tap';
import { criShimSuite } from './cri-shim-suite.ts';

// Image import, pods and daemon stops take tens of seconds; more on a busy machine.
t.setTimeout(300_000);
criShimSuite('1.6');
