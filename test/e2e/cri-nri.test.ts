// envhook as a resident NRI plugin on a real containerd 2.1.9 (Debian sid, NRI 0.8.0), driven
// over CRI as the kubelet drives it: the cases of test/e2e/cri-nri-suite.ts.
import t from 'tap';
import { criNriSuite } from './cri-nri-suite.ts';

t.setTimeout(600_000);
criNriSuite('2.1');
