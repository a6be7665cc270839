// node scripts/sea-train.cjs SOURCE CACHE <envhook argv>: runs the wrapped CLI bundle SOURCE (as
// scripts/sea-main.cjs does in the single executable) with the arguments given, and at exit
// writes V8's code cache of it, with every function compiled so far, to CACHE.
const fs = require('node:fs');
const { Script } = require('node:vm');

const [source, cache] = process.argv.splice(2, 2);
// Latin-1, as scripts/sea-main.cjs reads it (the source is ASCII): the same string, so V8 accepts the cache.
const script = new Script(fs.readFileSync(source, 'latin1'), { filename: source });
process.on('exit', () => fs.writeFileSync(cache, script.createCachedData()));
script.runInThisContext()(exports, require, module, __filename, __dirname);
