// The floor of inject's own work, in plain Node: read config.json (and any env files named
// after it), JSON.parse, JSON.stringify, atomic write (temp file, fsync, rename, fsync dir).
// Usage: node bench/floor.mjs BUNDLE [FILE...]
import fs from 'node:fs';
import path from 'node:path';

const [bundle, ...files] = process.argv.slice(2);
const file = path.join(bundle, 'config.json');
const spec = JSON.parse(fs.readFileSync(file, 'utf8'));
for (const f of files) spec.process.env.push(`X=${fs.readFileSync(f, 'utf8').length}`);
const tmp = path.join(bundle, `.config.json.${process.pid}`);
const fd = fs.openSync(tmp, 'wx', 0o600);
fs.writeFileSync(fd, JSON.stringify(spec, null, '\t'));
fs.fsyncSync(fd);
fs.closeSync(fd);
fs.renameSync(tmp, file);
const dir = fs.openSync(bundle, 'r');
fs.fsyncSync(dir);
fs.closeSync(dir);
