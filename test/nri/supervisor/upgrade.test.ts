// Starting the plugin file anew for an upgrade: the file the runtime ran, with the runtime's name
// and index, the supervisor's other variables, and neither the runtime's connection nor what the
// file sets itself; a file that is not there is a reason, not a throw.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { startPluginFile } from '../../../src/nri/supervisor/upgrade.ts';
import { createLogger } from '../../../src/log.ts';
import { waitFor } from '../../helpers/wait.ts';

const log = createLogger(undefined, 'silent');
const role = { name: 'envhook', index: '40', preinstalled: true };

t.test("the plugin file started as the runtime starts it, without the runtime's connection", async (t) => {
  const dir = t.testdir();
  const out = path.join(dir, 'out');
  const file = path.join(dir, '40-envhook');
  fs.writeFileSync(file, `#!/bin/sh\n{ echo "zero=$0"; echo "cwd=$(pwd)"; env; } > ${out}.tmp\nmv ${out}.tmp ${out}\n`, { mode: 0o755 });
  const env = {
    PATH: '/usr/bin:/bin',
    NRI_PLUGIN_SOCKET: '3',
    NRI_PLUGIN_NAME: 'old',
    NRI_PLUGIN_IDX: '99',
    ENVHOOK_NRI_HANDED: '1',
    ENVHOOK_NRI_WORKER: '{}',
    NODE_OPTIONS: '--v8-pool-size=1 --jitless',
    ENVHOOK_NRI_SUPERVISOR_OPTION: '--jitless',
    ENVHOOK_CONFIG: '/etc/envhook/other.json',
  };
  t.equal(startPluginFile(file, role, env, log), undefined, 'started');
  await waitFor(() => fs.existsSync(out), 10_000, 'the file ran');
  const lines = fs.readFileSync(out, 'utf8').split('\n');
  t.ok(lines.includes(`zero=${file}`), '$0 is the file');
  t.ok(lines.includes('cwd=/'), 'in /');
  t.ok(lines.includes('NRI_PLUGIN_NAME=envhook') && lines.includes('NRI_PLUGIN_IDX=40'), "the runtime's name and index");
  t.ok(lines.includes('ENVHOOK_CONFIG=/etc/envhook/other.json'), "the supervisor's other variables kept");
  for (const gone of ['NRI_PLUGIN_SOCKET', 'ENVHOOK_NRI_HANDED', 'ENVHOOK_NRI_WORKER', 'ENVHOOK_NRI_SUPERVISOR_OPTION'])
    t.notOk(
      lines.some((l) => l.startsWith(`${gone}=`)),
      `no ${gone}`,
    );
  // (tap adds its own NODE_OPTIONS to every child it sees started)
  t.notOk(
    lines.some((l) => l.startsWith('NODE_OPTIONS=') && l.includes('--v8-pool-size=1')),
    "not the supervisor's NODE_OPTIONS: the file sets its own",
  );
});

t.test('a plugin file not there (or not executable): why, and nothing started', async (t) => {
  const dir = t.testdir({ plain: 'not executable' });
  t.equal(
    startPluginFile(path.join(dir, 'gone'), role, {}, log),
    `the plugin file ${path.join(dir, 'gone')} is not there or not executable (renamed by the install?)`,
  );
  t.match(startPluginFile(path.join(dir, 'plain'), role, {}, log), /is not there or not executable/);
});
