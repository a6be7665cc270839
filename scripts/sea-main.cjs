// The single executable's main script (scripts/build-sea.mjs). Node's SEA code cache holds only
// the code V8 compiles before running (top-level code), so every function a create calls was
// compiled on first call at each start. Instead the CLI bundle is an asset, wrapped like a
// CommonJS module, with a V8 code cache made after a run of the front's `envhook shim create`
// (scripts/sea-training.mjs; so it holds the functions that run compiled). If V8 rejects the cache (another V8 or other flags), it compiles
// the source as usual: slower, same behaviour.
// The source is ASCII (build-sea.mjs), read as Latin-1 and the cache in place (getRawAsset: no
// copy), both straight from the executable's section: no UTF-8 decoding, no copies.
const { getRawAsset } = require('node:sea');
const { Script } = require('node:vm');

const script = new Script(Buffer.from(getRawAsset('envhook-main.js')).latin1Slice(), {
  filename: __filename,
  cachedData: new Uint8Array(getRawAsset('envhook-main.cache')),
});
script.runInThisContext()(exports, require, module, __filename, __dirname);
