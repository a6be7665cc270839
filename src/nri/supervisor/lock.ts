// One envhook registration per runtime socket. The lock is a Linux abstract unix socket named
// after the runtime's NRI socket as a file (socket-identity.ts: its directory's device, inode and birth time,
// the same through any symlink and in any mount namespace): the kernel frees it when its holder
// dies (no stale file), and it is per network namespace (a DaemonSet pod shares it with the host
// only with hostNetwork).
// The newest instance wins, with no window: it connects and asks to serve beside the holder
// (`share`, beside.ts); the holder claims each container from then on (worker/claims.ts) and
// says ok; the newcomer registers, and once the runtime lists it (`ready`) the holder stops its
// worker (the runtime sees that connection close) and releases the lock, which the newcomer
// then binds. A holder that does not know `share` (a version before it) is asked to stop first
// (`takeover`), as before: a window of the newcomer's registration. So a runtime restart (which
// starts its pre-installed plugin anew), an upgrade or a rollout never leaves a container to
// neither, nor adjusted by both. `envhook uninstall` asks the holder to stop (`stop`);
// `envhook install` asks a pre-installed holder to start its new plugin file (`upgrade`,
// upgrade.ts), which then takes over as above, and hears `handed-over <pid>` when it has.
import net from 'node:net';
import { EnvhookError, errnoReason } from '../../errors.ts';
import { sha256Hex } from '../../plan/sha256.ts';
import { socketKey } from './socket-identity.ts';

/**
 * takeover: a newer instance that cannot share; stop: uninstall; ping: who holds it, nothing
 * stops; share: a newer instance serves beside the holder until it yields; upgrade: install asks
 * the holder to start its plugin file anew (upgrade-ask.ts).
 */
export type LockRequest = 'takeover' | 'stop' | 'ping' | 'share' | 'upgrade';

export interface Lock {
  /** Stops answering and frees the name. */
  release(): Promise<void>;
}

export interface LockOptions {
  /** The runtime's NRI socket the plugin registers on. */
  socketPath: string;
  /** Another instance asks: stop serving (the worker gone), then resolve; the lock is released after. */
  onRequest(request: 'takeover' | 'stop', pid: number): Promise<void>;
  /** A newer instance asks to serve beside this one: resolve once this one claims each container; reject to refuse. */
  onShare?(pid: number): Promise<void>;
  /** That instance is listed by the runtime: stop serving (the worker gone), then resolve; the lock is released after. */
  onYield?(pid: number): Promise<void>;
  /** That instance went away before it was listed: serve alone again. */
  onShareEnded?(pid: number): void;
  /** Install asks for an upgrade: start the plugin file anew; why not, or undefined once started. */
  onUpgrade?(pid: number): string | undefined;
  /** How long the holder may take to answer and stop (default 10 s). */
  timeoutMs?: number;
  /** Heard with the holder's pid when one had to be asked to stop. */
  onTakeover?(pid: number): void;
}

/**
 * The abstract socket name for a runtime socket (without the leading NUL): `envhook-nri:` and
 * its key (socket-identity.ts), hashed when long. `root`: the node's `/` as this process sees it.
 */
export function lockName(socketPath: string, root = '/'): string {
  const key = socketKey(socketPath, root);
  return key.length <= 80 ? `envhook-nri:${key}` : `envhook-nri:sha256:${sha256Hex(key).slice(0, 32)}`;
}

export const address = (socketPath: string, root?: string): string => `\0${lockName(socketPath, root)}`;

/** Takes the lock, asking a holder to stop first. Rejects with a one-line EnvhookError. */
export async function acquireLock(opts: LockOptions): Promise<Lock> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const server = await listen(address(opts.socketPath)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EADDRINUSE')
        throw new EnvhookError(`cannot take the instance lock for ${opts.socketPath}: ${errnoReason(err)}`, { cause: err });
      return undefined;
    });
    if (server) return serve(server, opts);
    const left = deadline - Date.now();
    if (left <= 0) throw new EnvhookError(`another envhook nri for ${opts.socketPath} did not stop within ${timeoutMs} ms`);
    const pid = await ask(opts.socketPath, 'takeover', left, { sayMs: timeoutMs });
    if (pid !== undefined) opts.onTakeover?.(pid);
  }
}

/**
 * Asks the instance holding the lock for `socketPath` to stop, and resolves with its pid once it
 * has stopped (its connection closed), or undefined when none holds it. Used by takeover and
 * by uninstall; `ping` only learns the holder's pid.
 */
export function ask(
  socketPath: string,
  request: LockRequest,
  timeoutMs: number,
  { sayMs = timeoutMs, root }: { sayMs?: number; root?: string } = {},
): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const conn = net.createConnection(address(socketPath, root));
    let pid: number | undefined;
    let text = '';
    const timer = setTimeout(() => {
      conn.destroy();
      reject(new EnvhookError(`another envhook nri for ${socketPath}${pid ? ` (pid ${pid})` : ''} did not stop within ${sayMs} ms`));
    }, timeoutMs);
    conn.setEncoding('utf8');
    conn.on('connect', () => conn.write(`${request} ${process.pid}\n`));
    conn.on('data', (chunk: string) => {
      text += chunk;
      const m = /^ok ([0-9]+)\n/.exec(text);
      if (m) pid = Number(m[1]);
    });
    conn.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      // Nobody holds it (any more): the caller binds.
      if (err.code === 'ECONNREFUSED' || err.code === 'ENOENT') resolve(undefined);
      else reject(new EnvhookError(`cannot reach the envhook nri holding ${socketPath}: ${errnoReason(err)}`, { cause: err }));
    });
    conn.on('close', () => {
      clearTimeout(timer);
      resolve(pid);
    });
  });
}

function listen(addr: string): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(addr, () => {
      server.removeListener('error', reject);
      resolve(server);
    });
  });
}

/** Answers requests on the held lock: `ok <pid>`, then the holder stops, then the connection closes. */
function serve(server: net.Server, opts: LockOptions): Lock {
  let busy = false;
  const waiting = new Set<net.Socket>();
  /** Install's connections that asked for an upgrade: told how the hand-over it started ends. */
  const upgrades = new Set<net.Socket>();
  server.on('connection', (conn) => {
    waiting.add(conn);
    conn.on('close', () => waiting.delete(conn));
    conn.setEncoding('utf8');
    let text = '';
    conn.on('error', () => conn.destroy());
    let asked = false;
    const release = () => {
      server.close();
      // Everyone who asked meanwhile hears the close too, and tries to bind.
      for (const c of waiting) c.end();
    };
    conn.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > 64) return conn.destroy();
      if (asked) return;
      const m = /^(takeover|stop|ping|share|upgrade) ([0-9]{1,10})\n/.exec(text);
      if (!m) return;
      asked = true;
      if (m[1] === 'ping') {
        conn.end(`ok ${process.pid}\n`);
        return;
      }
      if (m[1] === 'upgrade') return upgrade(conn, Number(m[2]), busy, opts, upgrades);
      if (busy || (m[1] === 'share' && !opts.onShare)) return;
      busy = true;
      if (m[1] === 'share') return share(conn, Number(m[2]), opts, release, () => (busy = false), upgrades);
      conn.write(`ok ${process.pid}\n`);
      void opts.onRequest(m[1] as 'takeover' | 'stop', Number(m[2])).finally(release);
    });
  });
  return {
    release: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Whoever still asks (a newcomer serving beside this one) hears the close and binds.
        for (const c of waiting) c.end();
      }),
  };
}

/**
 * A newer instance serves beside this one: once this one claims each container, `ok`; at the
 * newcomer's `ready` this one yields (its worker gone), says `yielded` and releases the lock. The
 * newcomer gone before `ready`: this one serves alone again (`free`).
 */
function share(conn: net.Socket, pid: number, opts: LockOptions, release: () => void, free: () => void, upgrades: Set<net.Socket>): void {
  let state: 'asked' | 'sharing' | 'yielding' = 'asked';
  let text = '';
  conn.on('data', (chunk: string) => {
    text += chunk;
    if (state !== 'sharing' || !text.includes('ready\n')) return;
    state = 'yielding';
    void opts.onYield!(pid).finally(() => {
      conn.write('yielded\n');
      for (const u of upgrades) u.write(`handed-over ${pid}\n`);
      release();
    });
  });
  conn.on('close', () => {
    if (state === 'yielding') return;
    state = 'yielding';
    free();
    for (const u of upgrades) u.end(`not-taken-over ${pid}\n`);
    opts.onShareEnded?.(pid);
  });
  opts.onShare!(pid).then(
    () => {
      if (state !== 'asked') return;
      state = 'sharing';
      conn.write(`ok ${process.pid}\n`);
    },
    () => conn.destroy(),
  );
}

/**
 * Install asks this holder to start its plugin file anew (upgrade.ts): `started <pid>`, and the
 * connection stays open until the instance so started has taken over (`handed-over <its pid>`)
 * or went away (`not-taken-over <its pid>`); or `refused <pid> <why>` at once.
 */
function upgrade(conn: net.Socket, by: number, busy: boolean, opts: LockOptions, upgrades: Set<net.Socket>): void {
  const why = busy ? 'a hand-over or stop is under way' : opts.onUpgrade ? opts.onUpgrade(by) : 'not started from a plugin file';
  if (why !== undefined) return void conn.end(`refused ${process.pid} ${why}\n`);
  upgrades.add(conn);
  conn.on('close', () => upgrades.delete(conn));
  conn.write(`started ${process.pid}\n`);
}
