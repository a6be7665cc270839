// Who answers a container while two envhook nri serve one runtime: during a hand-over
// (docs/nri-guarantees.md#upgrades) the instance that leaves and the one that takes over are
// both registered, and NRI calls both for each CreateContainer, one after the other, in an
// order it does not promise (it sorts by index alone). NRI fails a create that two plugins both
// adjust, so exactly one may: the first called claims the container's id in the shared run
// directory (`<runDir>/nri-claims/<id>`, O_CREAT|O_EXCL, which one of two processes wins), and
// the other answers empty. Outside a hand-over nothing is claimed and no file is touched.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../../log.ts';
import { sha256Hex } from '../../plan/sha256.ts';

export const CLAIMS_DIR = 'nri-claims';

export interface Claims {
  /** True while another envhook nri serves beside this one. */
  readonly sharing: boolean;
  /** Turns sharing on or off; either way the claims of before are removed. */
  share(on: boolean): void;
  /** True when this instance answers container `id`: not sharing, or the first to claim it. */
  claim(id: string): boolean;
}

export function createClaims(runDir: string, sharing: boolean, log: Logger): Claims {
  const dir = path.join(runDir, CLAIMS_DIR);
  let on = sharing;
  let warned = false;
  const fileOf = (id: string): string => path.join(dir, /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/.test(id) ? id : sha256Hex(id));
  return {
    get sharing() {
      return on;
    },
    share(next) {
      on = next;
      clearClaims(dir, log);
    },
    claim(id) {
      if (!on) return true;
      try {
        fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
        fs.closeSync(fs.openSync(fileOf(id), fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o600));
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
        // Answering is the safe side: two answers fail the create (the kubelet retries it), none would start it without its env.
        if (!warned) log.warn({ err, dir }, 'nri: cannot claim containers during the hand-over: answering every one');
        warned = true;
        return true;
      }
    },
  };
}

/** Removes every claim (none is needed once one instance serves alone, or before a hand-over starts). */
function clearClaims(dir: string, log: Logger): void {
  try {
    fs.rmSync(dir, { recursive: true, force: true });
  } catch (err) {
    log.warn({ err, dir }, 'nri: hand-over claims not removed');
  }
}
