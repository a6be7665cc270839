// Unix sockets as a runtime leaves them, for the checks that look at one: one listening (this
// process), one left behind by a listener killed with SIGKILL (the file there, nothing listening),
// one whose listener is stopped (SIGSTOP) with its queue full. In a short private directory
// (a socket path is limited to 107 bytes), removed at teardown with whatever runs there.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { NODE } from './bundle.ts';

/** A fresh short directory under os.tmpdir(), removed at teardown. */
export function shortDir(t: Test, prefix = 'envhook-sock-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A socket this process listens on at `file` (its directories made), closed at teardown. */
export async function listenAt(t: Test, file: string): Promise<net.Server> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const server = net.createServer((c) => c.destroy());
  await new Promise<void>((resolve) => server.listen(file, resolve));
  t.teardown(() => server.close());
  return server;
}

/** A child Node listening at `file` with a queue of `backlog`; killed at teardown. */
async function listener(t: Test, file: string, backlog: number): Promise<ChildProcess> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const code = "require('net').createServer().listen({ path: process.argv[1], backlog: +process.argv[2] }, () => console.log('up'))";
  const child = spawn(NODE, ['-e', code, file, String(backlog)], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => void child.kill('SIGKILL'));
  await new Promise((resolve, reject) => {
    child.stdout!.once('data', resolve);
    child.once('exit', (c) => reject(new Error(`listener at ${file} exited (${c}) before listening`)));
  });
  return child;
}

/** A socket file nothing listens on: its process killed (SIGKILL) before it could remove it. */
export async function staleSocketAt(t: Test, file: string): Promise<void> {
  const child = await listener(t, file, 1);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** A socket whose listener is stopped (SIGSTOP) and its queue full: a new connection is refused with EAGAIN. */
export async function fullSocketAt(t: Test, file: string): Promise<void> {
  const child = await listener(t, file, 1); // 0 would be Node's default, 511
  child.kill('SIGSTOP');
  // the kernel queues backlog + 1 connections for a listener that accepts none
  for (let queued = 0; ; queued++) {
    const refused = await new Promise<boolean>((resolve) => {
      const c = net.connect(file);
      t.teardown(() => c.destroy());
      c.once('connect', () => resolve(false));
      c.once('error', (e: NodeJS.ErrnoException) => (e.code === 'EAGAIN' ? resolve(true) : resolve(false)));
    });
    if (refused) return;
    if (queued > 16) throw new Error(`the queue at ${file} never filled`);
  }
}
