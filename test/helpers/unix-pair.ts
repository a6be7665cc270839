// Two connected ends of a real unix stream socket in a short private directory (socket paths
// are limited to 107 bytes), destroyed with the directory at teardown.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export async function unixPair(t: { teardown(f: () => unknown): void }): Promise<{ client: net.Socket; server: net.Socket; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envhook-pair-'));
  const sock = path.join(dir, 's');
  const listening = net.createServer();
  const accepted = new Promise<net.Socket>((resolve) => listening.once('connection', resolve));
  await new Promise<void>((resolve) => listening.listen(sock, resolve));
  const client = net.createConnection(sock);
  const server = await accepted;
  listening.close();
  t.teardown(() => {
    client.destroy();
    server.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { client, server, dir };
}
