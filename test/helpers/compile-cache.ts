// Node's on-disk compile cache for the TypeScript a test runs in a child Node (the crio double,
// fixtures, the CLI from source): without it every such child strips and compiles its files
// again, most of its CPU on a busy machine. One directory per UID under the temporary
// directory, checked the way the CLI checks its own (src/cli/compile-cache.ts): a real
// directory, ours, not writable by others; else no cache, never a failure.
import os from 'node:os';
import path from 'node:path';
import { safeCacheDir } from '../../src/cli/compile-cache.ts';

const dir = safeCacheDir(path.join(os.tmpdir(), `envhook-test-compile-cache-${process.getuid?.() ?? 'x'}`));

/** The environment that gives a child Node the cache: `{ NODE_COMPILE_CACHE }`, or nothing when unsafe. */
export const COMPILE_CACHE_ENV: Record<string, string> = dir ? { NODE_COMPILE_CACHE: dir } : {};
