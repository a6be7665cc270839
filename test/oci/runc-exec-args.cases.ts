// One table of `runc exec` argv cases for both readers: src/oci/runc-exec-args.ts and the sh
// front hooks/envhook-runtime (which asks the runtime for the bundle of exactly these ids and
// hands exactly the --process calls into marked containers to envhook).
export interface ExecArgvCase {
  argv: string[];
  /** Global options before `exec` (what the front passes to `state`). */
  globals?: string[];
  process: string | undefined;
  id: string | undefined;
}

export const EXEC_ARGV_CASES: ExecArgvCase[] = [
  { argv: ['c1', 'env'], process: undefined, id: 'c1' },
  { argv: ['-t', 'c1', 'sh'], process: undefined, id: 'c1' },
  { argv: ['--process', '/p.json', 'c1'], process: '/p.json', id: 'c1' },
  { argv: ['-p', 'p.json', 'c1'], process: 'p.json', id: 'c1' },
  { argv: ['-p=/p.json', 'c1'], process: '/p.json', id: 'c1' },
  { argv: ['--process=/p.json', 'c1'], process: '/p.json', id: 'c1' },
  { argv: ['-process', '/p.json', 'c1'], process: '/p.json', id: 'c1' },
  { argv: ['--process=', 'c1', 'env'], process: undefined, id: 'c1' },
  { argv: ['--process', '/a', '--process', '/b', 'c1'], process: '/b', id: 'c1' },
  // What containerd's runc v2 shim passes (go-runc Exec).
  {
    argv: ['--process', '/tmp/runc-process123', '--detach', '--pid-file', '/b/exec1.pid', '--console-socket', '/tmp/pty.sock', 'c1'],
    globals: ['--root', '/run/containerd/runc/k8s.io', '--log', '/b/log.json', '--log-format', 'json', '--systemd-cgroup'],
    process: '/tmp/runc-process123',
    id: 'c1',
  },
  // What conmon passes for CRI-O.
  {
    argv: ['--pid-file', '/x/pid', '--process', '/x/exec-process-1', '--detach', '--tty', 'c1'],
    globals: ['--root=/run/runc'],
    process: '/x/exec-process-1',
    id: 'c1',
  },
  // Every value option eats the next word, even one that looks like an option.
  { argv: ['--env', '-p', 'c1', 'x'], process: undefined, id: 'c1' },
  {
    argv: [
      '-e',
      'A=1',
      '--cwd',
      '/w',
      '-u',
      '0:0',
      '-g',
      '5',
      '--user=1',
      '--additional-gids',
      '7',
      '-c',
      'CAP_X',
      '--cap',
      'CAP_Y',
      '--process-label',
      'l',
      '--apparmor',
      'a',
      '--cgroup',
      'g',
      '--preserve-fds',
      '2',
      '--pid-file=/pid',
      '-p',
      '/p',
      'c1',
    ],
    process: '/p',
    id: 'c1',
  },
  { argv: ['--cwd', '--process', '/p', 'c1'], process: undefined, id: '/p' },
  { argv: ['-t', '-d', '--no-new-privs', '--ignore-paused', '--detach=true', '-p', '/p', 'c1'], process: '/p', id: 'c1' },
  // Options end at the id: what follows is the command.
  { argv: ['-p', '/p', 'c1', '-p', '/q'], process: '/p', id: 'c1' },
  { argv: ['c1', '-p', '/q'], process: undefined, id: 'c1' },
  { argv: ['-p', '/p', '--', '-c1'], process: '/p', id: '-c1' },
  { argv: ['-p', '/p', '--'], process: '/p', id: undefined },
  { argv: ['-p', '/p'], process: '/p', id: undefined },
  { argv: ['-p'], process: undefined, id: undefined },
  { argv: [], process: undefined, id: undefined },
];
