// Loads src/tools.ts (lint, convert) where it lives: imported from the sources; required from
// dist/envhook-tools.cjs beside the CLI bundle; compiled from the single executable's asset.
// Its errors come from its own copy of errors.ts, so they are taken over by name here, as
// EnvhookErrors of this bundle (their messages are ours: names, paths, positions).
import { EnvhookError } from '../errors.ts';

type Tools = typeof import('../tools.ts');

// Set by esbuild's `define` in the CLI bundle (scripts/build.mjs).
declare const __ENVHOOK_BUNDLE__: boolean | undefined;

const OUR_ERRORS = new Set(['EnvhookError', 'SchemaError', 'EnvFileError']);

export async function loadTools(): Promise<Tools> {
  if (typeof __ENVHOOK_BUNDLE__ === 'undefined') {
    // A variable specifier: esbuild leaves it alone, so tools.ts stays out of the CLI bundle.
    const source = '../tools.ts';
    return (await import(source)) as Tools;
  }
  const sea = require('node:sea') as typeof import('node:sea');
  if (!sea.isSea()) {
    const file = require('node:path').join(__dirname, 'envhook-tools.cjs') as string;
    // `envhook install` without a single executable puts only the CLI bundle on a node.
    if (!require('node:fs').existsSync(file))
      throw new EnvhookError(
        `lint and convert are not installed here (no ${file}): run them from the envhook package or its single executable`,
      );
    return require(file) as Tools;
  }
  const { Script } = require('node:vm') as typeof import('node:vm');
  const module = { exports: {} as Tools };
  new Script(sea.getAsset('envhook-tools.js', 'utf8'), { filename: 'envhook-tools.js' }).runInThisContext()(
    module.exports,
    require,
    module,
    __filename,
    __dirname,
  );
  return module.exports;
}

/** Runs `fn`, taking over the tools bundle's EnvhookErrors as this bundle's. */
export function adopt<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof Error && !(err instanceof EnvhookError) && OUR_ERRORS.has(err.name))
      throw new EnvhookError(err.message, { cause: err });
    throw err;
  }
}
