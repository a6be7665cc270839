// The bundled CLI's launcher (dist/envhook.cjs), bundle-only: Node's compile cache applies only
// to modules loaded after it is enabled, and a bundle is compiled as one script before its first
// line runs. So this small file enables the cache, then loads the real bundle
// (dist/envhook-main.cjs, built from main.ts), which gets cached. The SEA runs envhook-main
// directly with its own code cache.
import { enableCompileCache } from './compile-cache.ts';

enableCompileCache();
require('./envhook-main.cjs');
