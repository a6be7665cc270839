// The build outputs start and answer `version` (npm test builds first).
import t from 'tap';
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';

const outputs: [string, string[]][] = [
  ['dist/envhook.cjs', [process.execPath, 'dist/envhook.cjs']],
  ['dist/envhook-main.cjs', [process.execPath, 'dist/envhook-main.cjs']],
  ['dist/envhook', ['dist/envhook']],
];

for (const [file, [cmd, ...args]] of outputs) {
  t.test(file, { skip: fs.existsSync(file) ? false : `${file} not built (npm run build)` }, async (t) => {
    const out = execFileSync(cmd!, [...args, 'version']).toString();
    t.match(out, /^envhook \d+\.\d+\.\d+\S* \(node 24\./);
  });
}
