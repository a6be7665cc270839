// npm run test:unit: the test files that need no container runtime and no build, for the
// edit-test loop (well under a minute of CPU; `npm test` runs everything). Chosen by rule at
// each run, so that a new file is in or out by what it does. Out:
// - test/e2e/, and every file that drives a runtime or another program: the harnesses of
//   test/helpers/{cri,install,nri,shim,watch}/, a skip when a runtime is missing, runc, ctr,
//   containerd, Podman, helm or bash by name;
// - every file that runs the built CLI (dist/, or envhook() and builtCli() of test/helpers/bundle.ts);
// - the adversarial suites of test/security/ and every file that raises tap's timeout (t.setTimeout):
//   process-heavy by their own account.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
process.chdir(root);
const OUT = [
  /helpers\/(cri|install|nri|shim|watch)\/|missingFor|runcRun|'runc'|"runc"|'ctr'|containerd|podman|helm|'bash'|bash\.ts'/,
  /dist\/|builtCli|import \{[^}]*\benvhook\b[^}]*\} from '[./]*helpers\/bundle\.ts'/,
  /t\.setTimeout\(/,
];

function* testFiles(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* testFiles(p);
    else if (e.name.endsWith('.test.ts')) yield p;
  }
}

const files = [...testFiles('test')].filter((f) => {
  if (f.startsWith('test/e2e/') || f.startsWith('test/security/')) return false;
  const text = fs.readFileSync(f, 'utf8');
  return !OUT.some((re) => re.test(text));
});
if (process.argv.includes('--list')) {
  process.stdout.write(files.map((f) => `${f}\n`).join(''));
  process.exit(0);
}
const tap = spawnSync('tap', files, { stdio: 'inherit', env: { ...process.env, TAP_TYPE_STRIP_ONLY: '1' } });
process.exit(tap.status ?? 1);
