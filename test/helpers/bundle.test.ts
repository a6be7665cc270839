// The e2e helpers themselves: a busybox bundle runs under real runc and prints its env; the built
// CLI started in the foreground and in the background with one environment.
import t from 'tap';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { builtCli, envhook, makeBundle, makeRootfs, missingForRunc, NODE, parseEnvOutput, REPO, runcRun, spawnEnvhook } from './bundle.ts';
import { makePod } from '../../scripts/kubelet-pod.ts';

const missing = missingForRunc();
t.test('a kubelet-like pod and a busybox bundle run under runc', { skip: missing }, async (t) => {
  const dir = t.testdir({});
  const rootfs = makeRootfs(path.join(dir, 'rootfs'));
  const pod = makePod(path.join(dir, 'kubelet'), { emptyDirs: { config: { 'config.env': "A='1'\n" } } });
  const bundle = makeBundle(path.join(dir, 'bundle'), rootfs, {
    env: ['PATH=/bin', 'X=y'],
    mounts: pod.mounts('app'),
    args: ['sh', '-c', 'env; cat /etc/hosts'],
  });
  const r = runcRun(bundle, path.join(dir, 'runc-root'));
  t.equal(r.status, 0, r.stderr);
  t.equal(parseEnvOutput(r.stdout).get('X'), 'y');
  t.match(r.stdout, /127\.0\.0\.1 localhost/);
});

t.test("envhook() and spawnEnvhook(): one child (cliChild), which tap's loader does not follow", async (t) => {
  // tap's loader (its NODE_OPTIONS, which it adds to every child it spawns) records each process
  // it runs in, with its argv, in .tap/processinfo when the process exits
  const recorded = (marker: string) => {
    const dir = path.join(REPO, '.tap/processinfo');
    return fs.existsSync(dir) && fs.readdirSync(dir).some((f) => fs.readFileSync(path.join(dir, f), 'utf8').includes(marker));
  };
  const marker = (what: string) => path.join(t.testdir(), `${what}-${process.pid}-${Date.now()}.env`);
  const direct = marker('direct');
  t.equal(spawnSync(NODE, [builtCli(), 'check', direct]).status, 1);
  t.ok(recorded(direct), 'Node spawned as is: recorded (the loader followed it)');
  const fg = marker('foreground');
  t.equal(envhook(['check', fg]).status, 1);
  t.notOk(recorded(fg), 'envhook(): not recorded');
  const bg = marker('background');
  const child = spawnEnvhook(['check', bg]);
  t.equal(await new Promise((resolve) => child.once('exit', resolve)), 1);
  t.notOk(recorded(bg), 'spawnEnvhook(): not recorded');
});
