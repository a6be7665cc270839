// loadTools from the sources and from the built CLI bundle, and adopt's taking over of errors
// thrown by the tools bundle's own copy of errors.ts.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { adopt, loadTools } from '../../src/cli/tools-loader.ts';
import { EnvhookError } from '../../src/errors.ts';
import { runConvert, runLint } from '../../src/tools.ts';
import { NODE, REPO } from '../helpers/bundle.ts';
import { refused } from '../helpers/refusal.ts';

t.test('from the sources: src/tools.ts itself', async (t) => {
  const tools = await loadTools();
  t.equal(tools.runLint, runLint);
  t.equal(tools.runConvert, runConvert);
});

t.test("adopt: the tools bundle's EnvhookError, SchemaError and EnvFileError become this bundle's EnvhookError", async (t) => {
  for (const name of ['EnvhookError', 'SchemaError', 'EnvFileError']) {
    const foreign = Object.assign(new Error(`x.yaml:1:1: ${name}`), { name });
    const err = t.throws(() =>
      adopt(() => {
        throw foreign;
      }),
    ) as Error;
    t.ok(err instanceof EnvhookError, name);
    t.equal(err.message, `x.yaml:1:1: ${name}`);
    t.equal(err.cause, foreign);
  }
});

t.test('adopt: other errors and our own pass through as they are; a value comes back', async (t) => {
  const other = new TypeError('boom');
  t.equal(
    t.throws(() =>
      adopt(() => {
        throw other;
      }),
    ),
    other,
  );
  const ours = new EnvhookError('ours');
  t.equal(
    t.throws(() =>
      adopt(() => {
        throw ours;
      }),
    ),
    ours,
  );
  t.equal(
    adopt(() => 42),
    42,
  );
});

t.test(
  'the CLI bundle without envhook-tools.cjs beside it: lint is one line, exit 1',
  { skip: !fs.existsSync(path.join(REPO, 'dist/envhook-main.cjs')) && 'dist/ not built (npm run build)' },
  async (t) => {
    const dir = t.testdir({ 'pod.yaml': 'kind: Pod\nspec:\n  containers: [{name: app}]\n' });
    for (const f of ['envhook.cjs', 'envhook-main.cjs']) fs.copyFileSync(path.join(REPO, 'dist', f), path.join(dir, f));
    const lint = () =>
      spawnSync(NODE, [path.join(dir, 'envhook.cjs'), 'lint', path.join(dir, 'pod.yaml')], {
        encoding: 'utf8',
        env: { ...process.env, NODE_EXTRA_CA_CERTS: '' },
      });
    const r = lint();
    refused(
      t,
      r,
      `envhook: lint and convert are not installed here (no ${path.join(dir, 'envhook-tools.cjs')}): run them from the envhook package or its single executable\n`,
    );
    fs.copyFileSync(path.join(REPO, 'dist/envhook-tools.cjs'), path.join(dir, 'envhook-tools.cjs'));
    const ok = lint();
    t.equal(ok.status, 0, ok.stderr);
    t.equal(ok.stderr, '0 errors, 0 warnings\n');
  },
);
