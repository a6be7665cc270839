// `envhook nri` against a real containerd 2.1.9 (Debian sid, NRI 0.8.0): registration as
// containerd logs it, reconnection after a containerd restart, a clean exit on SIGTERM,
// and the pre-installed form (containerd starts the plugin from its plugin directory with the
// connection in NRI_PLUGIN_SOCKET).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { NODE, REPO } from '../helpers/bundle.ts';
import { missingNriContainerd, startNriContainerd } from '../helpers/nri/containerd.ts';
import { startNriProcess } from '../helpers/nri/process.ts';
import { NRI_CONNECTED } from '../helpers/cri/containerd.ts';
import { sleep } from '../helpers/wait.ts';

const skip = missingNriContainerd();
const CONNECTED = NRI_CONNECTED;

t.test('external plugin: registers, comes back after a containerd restart, exits 0 on SIGTERM', { skip }, async (t) => {
  const ctrd = await startNriContainerd();
  t.teardown(() => ctrd.cleanup());
  const p = startNriProcess(['--socket', ctrd.nriSocket], { dir: t.testdir() });
  t.teardown(() => p.stop());
  await ctrd.waitForLog(CONNECTED);
  t.match(ctrd.log(), /plugin \\"external:50-envhook\[\d+\]\\" registered as \\"50-envhook\\"/, 'containerd: registered as 50-envhook');
  await p.waitForLog(/"runtime":"containerd","version":"2\.1\.9/);

  // Restart: stop containerd, start it again with the same directories.
  await ctrd.stop();
  const from = ctrd.log().length;
  await ctrd.start();
  const m = await ctrd.waitForLog(new RegExp(`.*${CONNECTED.source}.*`), 20_000, from);
  const after = ctrd.log().slice(from);
  // The backoff's cap is nri-daemon.test.ts's: here, the order in containerd's own log.
  const up = after.indexOf('Synchronizing NRI (plugin) with current runtime state');
  t.ok(up >= 0 && up < after.indexOf(m[0]), "reconnected after containerd's NRI was up again");
  t.match(p.log(), /"msg":"nri: disconnected"/);

  // SIGTERM: exit 0, and containerd sees the connection close.
  const mark = ctrd.log().length;
  t.equal(await p.stop(), 0, 'exit status 0 on SIGTERM');
  await ctrd.waitForLog(/connection to plugin \\"50-envhook\\" closed/, 5000, mark);
  t.equal(p.stderr(), '');
});

t.test(
  "pre-installed plugin: started by containerd, uses NRI_PLUGIN_SOCKET, ends when containerd's socket is gone",
  {
    skip,
  },
  async (t) => {
    const dir = t.testdir();
    const ctrd = await startNriContainerd();
    t.teardown(() => ctrd.cleanup());
    const logFile = path.join(dir, 'plugin.log');
    const pidFile = path.join(dir, 'plugin.pid');
    // containerd gives the plugin an environment of three variables only: the wrapper sets the rest.
    fs.writeFileSync(
      path.join(ctrd.pluginDir, '50-envhook'),
      `#!/bin/sh\necho $$ > ${JSON.stringify(pidFile)}\nexec ${JSON.stringify(NODE)} ${JSON.stringify(
        path.join(REPO, 'src/cli/main.ts'),
      )} nri --socket ${JSON.stringify(ctrd.nriSocket)} --run-dir ${JSON.stringify(path.join(dir, 'run'))} --log-file ${JSON.stringify(
        logFile,
      )} --log-level debug\n`,
      { mode: 0o755 },
    );
    await ctrd.stop();
    const from = ctrd.log().length;
    await ctrd.start();
    await ctrd.waitForLog(/pre-installed NRI plugin \\"50-envhook\\" synchronization success/, 20_000, from);
    t.match(
      ctrd.log().slice(from),
      /plugin \\"pre-connected:50-envhook\[\d+\]\\" registered as \\"50-envhook\\"/,
      'containerd: pre-connected plugin',
    );
    const log = fs.readFileSync(logFile, 'utf8');
    t.match(log, /"fd":3,"runtime":"containerd".*"msg":"nri: registered"/, 'registered on the connection containerd handed over');
    t.equal(log.match(/nri: registered/g)?.length, 1, 'and did not dial the socket as well');
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    await ctrd.stop();
    const end = Date.now() + 5000;
    while (fs.existsSync(`/proc/${pid}`) && Date.now() < end) await sleep(50);
    t.notOk(
      fs.existsSync(`/proc/${pid}`) && !fs.readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z'),
      'the plugin ended with its connection',
    );
  },
);
