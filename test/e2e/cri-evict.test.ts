// Containers created while envhook nri was not registered, evicted over CRI on a real containerd
// 2.1.9 (Debian sid, NRI 0.8.0): the cases of test/e2e/cri-evict-suite.ts.
import t from 'tap';
import { criEvictSuite } from './cri-evict-suite.ts';

t.setTimeout(600_000);
criEvictSuite('2.1');
