// One table of runc argv cases for both parsers: src/oci/runc-args.ts and the sh front
// hooks/envhook-runtime (which must hand exactly the create/run calls to envhook).
export interface RuncArgvCase {
  argv: string[];
  /** The subcommand runc would run; undefined: none (help, version, or incomplete argv). */
  sub: string | undefined;
  log?: string;
  logFormat?: string;
  /** For create/run: the bundle (undefined: the working directory) and id, or the error. */
  bundle?: string;
  id?: string;
  error?: RegExp;
  help?: boolean;
}

export const RUNC_ARGV_CASES: RuncArgvCase[] = [
  { argv: ['create', '--bundle', '/b', 'id'], sub: 'create', bundle: '/b', id: 'id' },
  { argv: ['--root', '/r', 'create', '-b', '/b', 'id'], sub: 'create', bundle: '/b', id: 'id' },
  { argv: ['--root=/r', 'run', '--bundle=/b', 'id'], sub: 'run', bundle: '/b', id: 'id' },
  { argv: ['-root', '/r', 'run', '-b=/b', 'id'], sub: 'run', bundle: '/b', id: 'id' },
  // What containerd's runc v2 shim passes.
  {
    argv: [
      '--root',
      '/run/containerd/runc/default',
      '--log',
      '/b/log.json',
      '--log-format',
      'json',
      '--systemd-cgroup',
      'create',
      '--bundle',
      '/b',
      '--pid-file',
      '/b/init.pid',
      '--console-socket',
      '/tmp/s.sock',
      'id',
    ],
    sub: 'create',
    log: '/b/log.json',
    logFormat: 'json',
    bundle: '/b',
    id: 'id',
  },
  { argv: ['--log=/l', '--log-format=json', 'create', 'x'], sub: 'create', log: '/l', logFormat: 'json', bundle: undefined, id: 'x' },
  { argv: ['--log', '/l', 'state', 'x'], sub: 'state', log: '/l' },
  { argv: ['--debug', '--systemd-cgroup', 'create', 'id'], sub: 'create', bundle: undefined, id: 'id' },
  { argv: ['--debug=true', '--rootless', 'false', 'run', '-d', 'id'], sub: 'run', bundle: undefined, id: 'id' },
  // A value option eats the next word even when it looks like a subcommand.
  { argv: ['--criu', 'create', 'state', 'id'], sub: 'state' },
  { argv: ['--log', 'run', 'list'], sub: 'list', log: 'run' },
  { argv: ['--log-level', 'debug', '--cgroup-manager', 'cgroupfs', 'create', 'x'], sub: 'create', bundle: undefined, id: 'x' },
  { argv: ['--', 'create', 'id'], sub: 'create', bundle: undefined, id: 'id' },
  { argv: ['--root', '/r', '--', 'run', 'id'], sub: 'run', bundle: undefined, id: 'id' },
  { argv: ['--unknown-flag', 'create', 'id'], sub: 'create', bundle: undefined, id: 'id' },
  { argv: ['state', 'id'], sub: 'state' },
  { argv: ['--root', '/r', 'kill', 'id', 'KILL'], sub: 'kill' },
  { argv: ['exec', '-t', 'id', 'sh'], sub: 'exec' },
  { argv: ['features'], sub: 'features' },
  { argv: ['help', 'create'], sub: 'help' },
  { argv: ['-', 'create'], sub: '-' },
  { argv: ['--version'], sub: undefined },
  { argv: ['-v', 'create', 'id'], sub: undefined },
  { argv: ['--help'], sub: undefined },
  { argv: ['-h', 'run', 'id'], sub: undefined },
  { argv: [], sub: undefined },
  { argv: ['--root'], sub: undefined },
  { argv: ['--root', '/r', '--'], sub: undefined },
  // create/run options: urfave/cli v1 also reads flags after the id; the last value wins.
  { argv: ['create', 'id', '-b', '/b'], sub: 'create', bundle: '/b', id: 'id' },
  { argv: ['run', '--bundle', '/a', '--bundle', '/b', 'id'], sub: 'run', bundle: '/b', id: 'id' },
  { argv: ['run', '--bundle', '', 'id'], sub: 'run', bundle: undefined, id: 'id' },
  { argv: ['create', '--no-pivot', '--no-new-keyring', '--preserve-fds', '2', 'id'], sub: 'create', bundle: undefined, id: 'id' },
  { argv: ['run', '--detach', '--keep', '--no-subreaper', '--pid-file=/p', 'id'], sub: 'run', bundle: undefined, id: 'id' },
  { argv: ['create', '--', '-id'], sub: 'create', bundle: undefined, id: '-id' },
  { argv: ['create', '--help'], sub: 'create', help: true },
  { argv: ['create', '-d', 'id'], sub: 'create', error: /^runc create: unknown option "-d"$/ },
  { argv: ['run', '--bogus=1', 'id'], sub: 'run', error: /^runc run: unknown option "--bogus"$/ },
  { argv: ['create'], sub: 'create', error: /^runc create: expected one container id, got 0 arguments$/ },
  { argv: ['create', 'a', 'b'], sub: 'create', error: /^runc create: expected one container id, got 2 arguments$/ },
  { argv: ['create', 'id', '-b'], sub: 'create', error: /^runc create: option -b needs a value$/ },
];
