// Output into a closed pipe ends quietly (`envhook status --json | true`, `… | head -1`): the
// built CLI run with a stdout whose reader is gone before it starts, so that its first write
// fails with EPIPE whatever the timing. No `Error: write EPIPE`, no stack trace, the command's
// own exit status.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { builtCli, NODE, REPO } from '../helpers/bundle.ts';

t.setTimeout(300_000);

/** The write end of a FIFO that no one reads any more: every write to it fails with EPIPE. */
function closedPipe(dir: string): number {
  const fifo = path.join(dir, `fifo-${Math.random().toString(16).slice(2)}`);
  t.equal(spawnSync('mkfifo', [fifo]).status, 0, 'mkfifo');
  const reader = fs.openSync(fifo, 'r+'); // O_RDWR: opening the write end does not block
  const writer = fs.openSync(fifo, 'w');
  fs.closeSync(reader);
  return writer;
}

t.test('stdout closed before the first write: every command ends quietly, with its own status', async (t) => {
  const dir = t.testdir({ root: {}, 'a.env': "A='CANARY_pipe'\nB='x'\n", 'config.json': '{}' });
  const cli = builtCli();
  const pod = path.join(REPO, 'examples/pods/kep-3721-story1.yaml');
  const cases: [string[], number][] = [
    [['status', '--json', '--root', path.join(dir, 'root')], 0],
    [['install', '--runtime', 'podman', '--root', path.join(dir, 'root'), '--source', REPO, '--dry-run'], 0],
    [['lint', '--format', 'json', pod], 0],
    [['check', '--names', path.join(dir, 'a.env')], 0],
    [['--help'], 0],
    [['version'], 0],
    [['shim', '--help'], 0],
  ];
  for (const [args, status] of cases) {
    const out = closedPipe(dir);
    const r = spawnSync(NODE, [cli, ...args], {
      encoding: 'utf8',
      stdio: ['ignore', out, 'pipe'],
      env: { ...process.env, ENVHOOK_CONFIG: path.join(dir, 'config.json') },
      timeout: 60_000,
    });
    fs.closeSync(out);
    t.equal(r.stderr, '', `envhook ${args.join(' ')}: nothing on stderr`);
    t.equal(r.status, status, `envhook ${args.join(' ')}: exit ${status}`);
  }
});

t.test('stderr closed too: a failing command still exits 1, and nothing crashes', async (t) => {
  const dir = t.testdir({ 'config.json': '{}' });
  const out = closedPipe(dir);
  const err = closedPipe(dir);
  const r = spawnSync(NODE, [builtCli(), 'check', path.join(dir, 'missing.env')], {
    stdio: ['ignore', out, err],
    env: { ...process.env, ENVHOOK_CONFIG: path.join(dir, 'config.json') },
    timeout: 60_000,
  });
  fs.closeSync(out);
  fs.closeSync(err);
  t.equal(r.status, 1, 'the command’s own failure status');
  t.equal(r.signal, null);
});
