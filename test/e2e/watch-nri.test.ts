// Owned copies through the resident NRI plugin on a real containerd 2.1.9 (Debian sid, NRI
// 0.8.0): the container reads envhook's copies, every rewrite reaches its view owned, no reader
// ever meets a file it may not read (test/e2e/copy-nri-suite.ts).
import t from 'tap';
import { copySuite } from './copy-nri-suite.ts';

t.setTimeout(900_000);
copySuite({ via: 'nri', version: '2.1' });
