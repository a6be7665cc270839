// Containers created while envhook nri was not registered, evicted over CRI on a real containerd
// 1.7.24 (Debian trixie, NRI 0.6.1): the cases of test/e2e/cri-evict-suite.ts. The plugin
// dials the socket (an external plugin), so 1.7 sends it the Synchronize that finds them.
import t from 'tap';
import { criEvictSuite } from './cri-evict-suite.ts';

t.setTimeout(600_000);
criEvictSuite('1.7');
