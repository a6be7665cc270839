// tap's process-info hook adds its loader (`--import` of a file under node_modules) to the
// NODE_OPTIONS of every child the tests spawn, and every Node below that child inherits it. In
// a CLI run it multiplies Node's start-up CPU, which tests spawning
// hundreds of envhook processes pay on a busy machine; and a process of another UID cannot
// load it when the checkout is out of its reach. The runtimes that start envhook pass no
// NODE_OPTIONS either: these children start the way they do on a node.

/** `[command, args]` running `cmd ARGS` through `env -u NODE_OPTIONS`, which then execs it (same PID). */
export function untapped(cmd: string, args: readonly string[]): [string, string[]] {
  return ['/usr/bin/env', ['-u', 'NODE_OPTIONS', cmd, ...args]];
}
