// The copier thread's side (copier.ts starts it): one job at a time, each run to its end with
// the same functions a process runs in place (copy.ts, remove.ts), its result or its error posted
// back as plain data. An error crosses as its message when it is ours (EnvhookError: names and
// paths, never a byte of a file) and as its code, call and path otherwise.
import { parentPort } from 'node:worker_threads';
import { EnvhookError } from '../errors.ts';
import { runCopyJob, runStartJob } from './copy.ts';
import type { ThreadError, ThreadReply, ThreadRequest } from './copier-messages.ts';
import { cleanUpCopies, removeCopy, removePodCopies } from './remove.ts';
import { measureCopies } from './usage.ts';

/** The run directory a job writes or removes under. */
function runDirOf(m: ThreadRequest): string | undefined {
  if (m.kind === 'copy') return m.job.place.runDir;
  if (m.kind === 'copy-start') return m.start.jobs[0]?.place.runDir;
  if (m.kind === 'remove-pod') return m.runDir;
  if (m.kind === 'clean-up') return m.places[0]?.runDir;
  return m.place.runDir;
}

/** The reply with what the copies hold now (a readlink a copy: usage.ts keeps the payloads measured). */
function withHeld(m: ThreadRequest, r: ThreadReply): ThreadReply {
  const runDir = runDirOf(m);
  if (runDir === undefined) return r;
  try {
    const { bytes, files, copies } = measureCopies(runDir);
    return { ...r, held: { bytes, files, copies } };
  } catch {
    return r;
  }
}

function handle(m: ThreadRequest): ThreadReply {
  try {
    if (m.kind === 'copy') return { id: m.id, ok: true, value: runCopyJob(m.job) };
    if (m.kind === 'copy-start') return { id: m.id, ok: true, value: runStartJob(m.start) };
    if (m.kind === 'remove-pod') return { id: m.id, ok: true, value: removePodCopies(m.runDir, m.podUid) };
    if (m.kind === 'clean-up') return { id: m.id, ok: true, value: cleanUpCopies(m.places) };
    return { id: m.id, ok: true, value: removeCopy(m.place, m.onlyIf) };
  } catch (err) {
    return { id: m.id, ok: false, error: plainError(err) };
  }
}

function plainError(err: unknown): ThreadError {
  if (err instanceof EnvhookError) return { ours: true, message: err.message };
  const e = err as NodeJS.ErrnoException;
  return { ours: false, name: e?.name ?? 'Error', code: e?.code, syscall: e?.syscall, path: e?.path };
}

parentPort?.on('message', (m: ThreadRequest) => parentPort?.postMessage(withHeld(m, handle(m))));
