// The build outputs start and answer `version` and `--version`, alike (npm test builds first).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { ref, setup } from './helpers/shim/inject.ts';
import { makeAtomicVolume } from '../scripts/kubelet-pod.ts';

const outputs: [string, string[]][] = [
  ['dist/envhook.cjs', [process.execPath, 'dist/envhook.cjs']],
  ['dist/envhook-main.cjs', [process.execPath, 'dist/envhook-main.cjs']],
  ['dist/envhook', ['dist/envhook']],
];

for (const [file, [cmd, ...args]] of outputs) {
  t.test(file, { skip: fs.existsSync(file) ? false : `${file} not built (npm run build)` }, async (t) => {
    const out = execFileSync(cmd!, [...args, 'version']).toString();
    // the commit the build was made from, as git names it in this checkout (or unknown without one)
    const git = spawnSync('git', ['rev-parse', '--short=7', 'HEAD'], { encoding: 'utf8' });
    const commit = git.status === 0 ? `${git.stdout.trim()}(-dirty)?` : 'unknown';
    t.match(out, new RegExp(`^envhook \\d+\\.\\d+\\.\\d+\\S* \\(${commit}; node 24\\.\\d+\\.\\d+\\)\n$`));
    t.equal(execFileSync(cmd!, [...args, '--version']).toString(), out, '--version prints the same');
  });
}

// What a create through the front loads: the bundle's shim path must not pull in Node modules it
// never uses (scripts/build.mjs makes pino's worker_threads and assert lazy; shim/exec.ts loads
// child_process only for the exec it cannot serve). Each of these cost start-up on every create.
t.test(
  'dist/envhook-main.cjs: `shim create` with a log file and an owned copy loads no child_process, worker_threads, assert or net',
  {
    skip: fs.existsSync('dist/envhook-main.cjs') ? false : 'not built',
  },
  async (t) => {
    const s = setup(
      t,
      {
        'config.env': "CONFIG_VAR='HELLO'\n",
      },
      {
        'envhook.io/env': { app: [{ name: 'X', valueFrom: ref('CONFIG_VAR', 'config.env') }] },
        'envhook.io/volumeOwners': [{ volume: 'keys', defaultUser: 1000 }],
      },
    );
    // A mounted secret with owners: the create makes its owned copy (src/mirror/) too.
    const vol = makeAtomicVolume(s.pod, 'secret', 'keys', { key: { data: 'k\n', mode: 0o400 } });
    const spec = JSON.parse(fs.readFileSync(s.config, 'utf8'));
    spec.mounts.push({ destination: '/keys', source: vol, type: 'bind', options: ['rbind', 'ro'] });
    fs.writeFileSync(s.config, JSON.stringify(spec));
    // The run directory in memory, as on a node (/run is tmpfs): one on disk gets a warning on
    // stderr, and a pipe's stderr loads net.
    const runDir = fs.mkdtempSync('/dev/shm/envhook-build-test-');
    t.teardown(() => fs.rmSync(runDir, { recursive: true, force: true }));
    const list = path.join(s.dir, 'modules.txt');
    const hook = path.join(s.dir, 'list-modules.cjs');
    fs.writeFileSync(
      hook,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n')));\n`,
    );
    fs.writeFileSync(
      path.join(s.dir, 'envhook.json'),
      JSON.stringify({ kubeletRoot: s.pod.kubeletRoot, logFile: s.log, logLevel: 'debug', runDir }),
    );
    const env = { PATH: process.env.PATH, ENVHOOK_CONFIG: path.join(s.dir, 'envhook.json'), ENVHOOK_RUNTIME: fs.realpathSync('/bin/true') };
    // Through `env -i`: tap adds its own preload (NODE_OPTIONS) to every child it sees spawned.
    execFileSync('env', [
      '-i',
      ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
      process.execPath,
      '-r',
      hook,
      'dist/envhook-main.cjs',
      'shim',
      'create',
      '--bundle',
      s.bundle,
      'id1',
    ]);
    const created = JSON.parse(fs.readFileSync(s.config, 'utf8'));
    t.ok(created.process.env.includes('X=HELLO'), 'the create did its work');
    t.equal(
      created.mounts.at(-1).source,
      path.join(runDir, 'volumes', s.pod.uid, 'keys'),
      "and pointed the secret's mount at its owned copy",
    );
    t.match(fs.readFileSync(s.log, 'utf8'), /"msg":"applied; runtime next"/, 'and logged it through pino');
    const loaded = fs.readFileSync(list, 'utf8').split('\n');
    for (const m of ['child_process', 'worker_threads', 'assert', 'net']) t.notOk(loaded.includes(`NativeModule ${m}`), `${m} not loaded`);
  },
);
