// The build's version and commit. Replaced at build time by esbuild's `define` (scripts/build.mjs:
// package.json's version; the commit from git, `-dirty` when tracked files differ from it, or
// ENVHOOK_COMMIT, else 'unknown'); from source: 0.0.0-dev and unknown.
declare const __ENVHOOK_VERSION__: string | undefined;
declare const __ENVHOOK_COMMIT__: string | undefined;
declare const __ENVHOOK_MARK__: string | undefined;
const VERSION: string = typeof __ENVHOOK_VERSION__ === 'string' ? __ENVHOOK_VERSION__ : '0.0.0-dev';
const COMMIT: string = typeof __ENVHOOK_COMMIT__ === 'string' ? __ENVHOOK_COMMIT__ : 'unknown';

/**
 * `@(#)envhook VERSION (COMMIT)`, a literal in the built bundle (and so in the single executable's
 * bytes): install names the versions of the executable it replaces and of the new one from it
 * (markIn), without running either.
 */
const BUILD_MARK: string = typeof __ENVHOOK_MARK__ === 'string' ? __ENVHOOK_MARK__ : `@(#)envhook ${VERSION} (${COMMIT})`;

/** `VERSION (COMMIT)`, as `envhook version` and install's report say it. */
export const VERSION_AND_COMMIT = BUILD_MARK.slice(BUILD_MARK.indexOf('envhook ') + 'envhook '.length);

const MARK = /^@\(#\)envhook ([0-9A-Za-z.+-]{1,64}) \(([0-9a-f]{7,40}(?:-dirty)?|unknown)\)/;

/** `VERSION (COMMIT)` of the build whose bundle or executable `bytes` are; undefined without a mark. */
export function markIn(bytes: Buffer): string | undefined {
  const prefix = Buffer.from('@(#)envhook ', 'latin1');
  for (let at = bytes.indexOf(prefix); at >= 0; at = bytes.indexOf(prefix, at + 1)) {
    const m = MARK.exec(bytes.subarray(at, at + 128).toString('latin1'));
    if (m) return `${m[1]} (${m[2]})`;
  }
  return undefined;
}
