// The kubelet's view of envhook on containerd 1.7.24 (Debian trixie, fetched into a cache, never
// installed) with the CRI plugin and config version 2, through the `envhook` runtime handler
// that `envhook install` registered: the same cases as on 1.6 (test/e2e/cri-shim-suite.ts).
import t from 'tap';
import { criShimSuite } from './cri-shim-suite.ts';

t.setTimeout(300_000);
criShimSuite('1.7');
