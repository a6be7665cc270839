// Owned copies through the resident NRI plugin on a real containerd 2.1.9 (Debian sid, NRI
// 0.8.0): the container reads envhook's copies, every rewrite reaches its view owned, no reader
// ever meets a file it may not read (test/e2e/copy-nri-suite.ts).
import t from 'tap';
import { copyNriSuite } from './copy-nri-suite.ts';

t.setTimeout(900_000);
copyNriSuite('2.1');
