// Records the bytes of a real NRI session for test/fixtures/nri/: containerd 2.1.9 (Debian
// sid) with NRI on, `envhook nri` from source connected through a proxy socket that copies
// every chunk in both directions. Then containerd is stopped, so the recording ends with the
// runtime's side of a shutdown. Run as root:
//
//   node_modules/.bin/node test/nri/record-frames.ts   # writes test/fixtures/nri/containerd-2.1.9.json
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { startNriContainerd } from '../helpers/nri/containerd.ts';
import { NODE, REPO } from '../helpers/bundle.ts';
import { sidVersion } from '../../scripts/debian-sid.mjs';
import { sleep } from '../helpers/wait.ts';

const out = path.join(REPO, 'test/fixtures/nri/containerd-2.1.9.json');
const ctrd = await startNriContainerd();
const proxyPath = path.join(ctrd.dir, 'proxy.sock');
const chunks: { from: 'plugin' | 'runtime'; hex: string }[] = [];
const proxy = net.createServer((plugin) => {
  const runtime = net.createConnection(ctrd.nriSocket);
  plugin.on('data', (b: Buffer) => {
    chunks.push({ from: 'plugin', hex: b.toString('hex') });
    runtime.write(b);
  });
  runtime.on('data', (b: Buffer) => {
    chunks.push({ from: 'runtime', hex: b.toString('hex') });
    plugin.write(b);
  });
  plugin.on('close', () => runtime.destroy());
  runtime.on('close', () => plugin.destroy());
  plugin.on('error', () => {});
  runtime.on('error', () => {});
});
await new Promise<void>((r) => proxy.listen(proxyPath, r));
const envhook = spawn(
  NODE,
  [path.join(REPO, 'src/cli/main.ts'), 'nri', '--socket', proxyPath, '--log-file', path.join(ctrd.dir, 'envhook.log')],
  { stdio: 'inherit', env: { ...process.env, ENVHOOK_RUN_DIR: path.join(ctrd.dir, 'run') } },
);
try {
  await ctrd.waitForLog(/plugin \\"50-envhook\\" connected and synchronized/);
  await ctrd.stop();
  await sleep(300);
} finally {
  envhook.kill('SIGTERM');
  await new Promise((r) => envhook.once('exit', r));
  proxy.close();
  await ctrd.cleanup();
}
fs.writeFileSync(
  out,
  JSON.stringify(
    {
      runtime: `containerd ${sidVersion('containerd')}`,
      nri: `golang-github-containerd-nri-dev ${sidVersion('golang-github-containerd-nri-dev')}`,
      chunks,
    },
    null,
    1,
  ) + '\n',
);
console.log(`${chunks.length} chunks → ${path.relative(REPO, out)}`);
