// Owned copies through the resident NRI plugin on a real containerd 1.7.24 (Debian trixie, NRI
// 0.6.1): the same case as on 2.1.9 (test/e2e/copy-nri-suite.ts).
import t from 'tap';
import { copySuite } from './copy-nri-suite.ts';

t.setTimeout(900_000);
copySuite({ via: 'nri', version: '1.7' });
