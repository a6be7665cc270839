// CreateContainer, the call envhook is for: the request decoded into plain data, the handler
// (handler.ts: the pipeline with NRI's facts and applier) called with the time by which the
// answer must be on its way, the adjustment encoded back. The handler logs each adjustment and
// refusal itself (once, with the pod's names); this counts the result for the supervisor and
// tells the owner watcher what was created.
import { EnvhookError } from '../../errors.ts';
import { appliedNothing } from './handler.ts';
import { decode, Msg, type CreateContainerRequestShape } from '../wire/descriptors.ts';
import { toCreateRequest } from '../wire/plain-data.ts';
import { encodeCreateContainerResponse } from '../wire/reply-encoder.ts';
import type { RequestResult } from './observer.ts';
import { notifyPods, statusLine, type SessionState } from './session-state.ts';
import { ANSWERED_ELSEWHERE } from './types.ts';

/** NRI's default plugin_request_timeout, when the runtime's Configure gives none. */
const DEFAULT_REQUEST_TIMEOUT_MS = 2000;

/** The containers this session adjusted, whose PostCreateContainer needs no check (bounded). */
const ADJUSTED_MEMORY = 4096;

export async function createContainer(payload: Buffer, s: SessionState): Promise<Uint8Array> {
  const request = toCreateRequest(decode<CreateContainerRequestShape>(Msg.CreateContainerRequest, payload));
  const started = process.hrtime.bigint();
  const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
  // Three quarters of the runtime's request timeout: an error answered in time, not silence.
  const deadline = started + BigInt(Math.floor((s.requestTimeoutMs || DEFAULT_REQUEST_TIMEOUT_MS) * 0.75)) * 1_000_000n;
  try {
    const adjustment = await s.handler(request, { deadline });
    if (s.postCreate) {
      if (s.adjusted.size >= ADJUSTED_MEMORY) s.adjusted.clear();
      s.adjusted.add(request.container.id);
    }
    s.observer.request(appliedNothing(adjustment) || adjustment === ANSWERED_ELSEWHERE ? 'empty' : 'adjusted', seconds());
    if (adjustment !== ANSWERED_ELSEWHERE) notifyPods(s, 'CreateContainer', (pods) => pods.created(request, adjustment));
    return encodeCreateContainerResponse(adjustment);
  } catch (err) {
    const result: RequestResult = err instanceof EnvhookError ? 'refused' : 'error';
    s.observer.request(result, seconds(), statusLine(err));
    throw err;
  }
}
