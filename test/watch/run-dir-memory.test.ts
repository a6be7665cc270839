// Where the run directory is (src/watch/run-dir-memory.ts), on a real tmpfs mounted for the test
// and on the test directory's own file system (a disk here): the exact lines of a refusal and of
// a warning, a run directory not made yet judged by the directory it will be made in, and the
// commands that write copies (`envhook watch`, `envhook nri`, the shim's create) as an admin
// sees them.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { checkRunDirInMemory, runDirStorage } from '../../src/watch/run-dir-memory.ts';
import { envhook, spawnEnvhook } from '../helpers/bundle.ts';
import { waitFor } from '../helpers/wait.ts';
import { refused } from '../helpers/refusal.ts';

/** The test directory's file system, as `stat -f` names it; the lines below are written for a disk of the ext family. */
const DISK = execFileSync('stat', ['-f', '-c', '%T', t.testdirName.replace(/\/[^/]*$/, '') || '.'], { encoding: 'utf8' }).trim();
const onExt = DISK === 'ext2/ext3' ? false : `the test directory is on ${DISK}, not ext2/3/4: the exact lines are written for ext4`;

/** A tmpfs at `dir` while `fn` runs (unmounted before tap removes the test directory). */
async function withTmpfs(dir: string, fn: () => Promise<void> | void): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0755', 'tmpfs', dir]);
  try {
    await fn();
  } finally {
    execFileSync('umount', ['-l', dir]);
  }
}

t.test('a tmpfs: in memory, whether the run directory exists or will be made in it', async (t) => {
  const mnt = path.join(t.testdir({}), 'mnt');
  await withTmpfs(mnt, () => {
    t.same(runDirStorage(mnt), { at: mnt, type: 'tmpfs', inMemory: true });
    t.same(runDirStorage(path.join(mnt, 'envhook', 'x')), { at: mnt, type: 'tmpfs', inMemory: true }, 'judged where it will be made');
    t.equal(checkRunDirInMemory(mnt, 'refuse', true), undefined, 'nothing to say, refuse or not');
    t.equal(checkRunDirInMemory(path.join(mnt, 'envhook'), 'warn', false), undefined);
  });
});

t.test('a disk: refused with what to do, or a warning; the line says where it would be made', { skip: onExt }, async (t) => {
  const dir = t.testdir({ run: {} });
  const run = path.join(dir, 'run');
  t.same(runDirStorage(run), { at: run, type: 'ext2/ext3/ext4', inMemory: false });
  t.throws(() => checkRunDirInMemory(run, 'refuse', true), {
    message: `run directory ${run} is on ext2/ext3/ext4, not tmpfs: owned copies of secret volumes would be written to disk: mount a tmpfs at ${run}, or allow it with runDirOnDisk "warn" (--run-dir-on-disk warn, ENVHOOK_RUN_DIR_ON_DISK=warn)`,
  });
  const later = path.join(run, 'envhook');
  t.throws(() => checkRunDirInMemory(later, 'refuse', false), {
    message: `run directory ${later} would be made on ext2/ext3/ext4 (${run}), not tmpfs: owned copies of secret volumes would be written to disk: mount a tmpfs at ${later}, or allow it with runDirOnDisk "warn" (ENVHOOK_RUN_DIR_ON_DISK=warn)`,
  });
  t.equal(
    checkRunDirInMemory(run, 'warn', true),
    `warning: run directory ${run} is on ext2/ext3/ext4, not tmpfs: owned copies of secret volumes are written to disk (runDirOnDisk is "warn"): mount a tmpfs at ${run}`,
  );
});

t.test(
  'envhook watch and envhook nri: refused at once on a disk, one line, exit 1; on a tmpfs watch starts',
  { skip: onExt },
  async (t) => {
    const dir = t.testdir({ kubelet: { pods: {} } });
    const run = path.join(dir, 'run');
    const env = { ENVHOOK_CONFIG: '', ENVHOOK_KUBELET_ROOT: path.join(dir, 'kubelet') };
    const line = `envhook: run directory ${run} would be made on ext2/ext3/ext4 (${dir}), not tmpfs: owned copies of secret volumes would be written to disk: mount a tmpfs at ${run}, or allow it with runDirOnDisk "warn" (--run-dir-on-disk warn, ENVHOOK_RUN_DIR_ON_DISK=warn)\n`;
    const watch = envhook(['watch', '--run-dir', run, '--run-dir-on-disk', 'refuse'], { env });
    refused(t, watch, line, 'watch --run-dir-on-disk refuse');
    t.equal(watch.stdout, '');
    refused(t, envhook(['watch', '--run-dir', run], { env: { ...env, ENVHOOK_RUN_DIR_ON_DISK: 'refuse' } }), line, 'the variable');
    const nri = envhook(['nri', '--run-dir', run, '--socket', `/tmp/envhook-test-${process.pid}.sock`, '--run-dir-on-disk', 'refuse'], {
      env,
    });
    refused(t, nri, line, 'nri --run-dir-on-disk refuse');
    t.notOk(fs.existsSync(run), 'nothing made: no run directory, no status file');
    fs.mkdirSync(run, { mode: 0o700 });
    const there = line.replace(`would be made on ext2/ext3/ext4 (${dir})`, 'is on ext2/ext3/ext4');
    refused(t, envhook(['watch', '--run-dir', run, '--run-dir-on-disk', 'refuse'], { env }), there, 'the run directory there');
    refused(
      t,
      envhook(['watch', '--run-dir', run, '--run-dir-on-disk', 'never'], { env }),
      'envhook: --run-dir-on-disk "never": must be one of "refuse", "warn"\n',
    );

    // The same command on a tmpfs: it starts, and SIGTERM ends it.
    const mem = path.join(dir, 'mem');
    const logFile = path.join(dir, 'watch.log');
    await withTmpfs(mem, async () => {
      const child = spawnEnvhook([
        'watch',
        '--run-dir',
        path.join(mem, 'envhook'),
        '--kubelet-root',
        env.ENVHOOK_KUBELET_ROOT,
        '--run-dir-on-disk',
        'refuse',
        '--log-file',
        logFile,
      ]);
      const exited = new Promise((r) => child.once('exit', (code, signal) => r(code ?? signal)));
      await waitFor(
        () => fs.existsSync(logFile) && fs.readFileSync(logFile, 'utf8').includes('watching owners records'),
        20_000,
        'watch started',
      );
      child.kill('SIGTERM');
      // Started on a tmpfs, and ended by its own SIGTERM handler, installed before the first log line.
      t.equal(await exited, 0, 'ended by SIGTERM: a clean exit');
    });
    t.notMatch(fs.readFileSync(logFile, 'utf8'), 'not tmpfs', 'no warning on a tmpfs');
  },
);
