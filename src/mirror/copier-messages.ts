// What the copier (copier.ts) and its thread (copier-thread.ts) say to each other: plain data
// only (structured clone), no function, no class.
import type { CopyJob, CopyResult, StartJob } from './copy.ts';
import type { CopyPlace } from './layout.ts';

export type ThreadRequest =
  | { id: number; kind: 'copy'; job: CopyJob }
  | { id: number; kind: 'copy-start'; start: StartJob }
  | { id: number; kind: 'remove-pod'; runDir: string; podUid: string }
  | { id: number; kind: 'remove-copy'; place: CopyPlace; onlyIf?: string | undefined }
  | { id: number; kind: 'clean-up'; places: CopyPlace[] };

/** An error as it crosses: our message, or a foreign error's code, call and path (never its message). */
export type ThreadError =
  | { ours: true; message: string }
  | { ours: false; name: string; code?: string | undefined; syscall?: string | undefined; path?: string | undefined };

/** What the copies under the job's run directory hold after it (usage.ts), for status and metrics. */
export interface CopiesHeld {
  bytes: number;
  files: number;
  copies: number;
}

export type ThreadReply = (
  { id: number; ok: true; value: CopyResult | CopyResult[] | boolean | undefined } | { id: number; ok: false; error: ThreadError }
) & {
  held?: CopiesHeld | undefined;
};
