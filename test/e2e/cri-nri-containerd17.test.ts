// envhook as a resident NRI plugin on a real containerd 1.7.24 (Debian trixie, NRI 0.6.1, fetched
// into a cache, never installed), driven over CRI as the kubelet drives it: the same cases as on
// 2.1.9 (test/e2e/cri-nri-suite.ts). The plugin dials the socket (an external plugin), so
// 1.7 sends it a Synchronize; the pre-installed plugin, which gets none, is in
// install-containerd17.test.ts.
import t from 'tap';
import { criNriSuite } from './cri-nri-suite.ts';

t.setTimeout(600_000);
criNriSuite('1.7');
