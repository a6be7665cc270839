// The one place `envhook nri` gets its CreateContainer handler from. The pipeline's handler
// (branch core) is wired here; until then every container gets an empty adjustment.
import type { Logger } from '../log.ts';
import type { Settings } from '../settings.ts';
import { EMPTY_ADJUSTMENT, type NriCreateHandler } from './types.ts';

/** A placeholder handler: changes nothing in any container. Not the pipeline. */
export const emptyAdjustmentHandler: NriCreateHandler = () => EMPTY_ADJUSTMENT;

export function createNriHandler(_settings: Settings, _log: Logger): NriCreateHandler {
  return emptyAdjustmentHandler;
}
