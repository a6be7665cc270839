// The OCI container state (runtime spec, "State"): the JSON a runtime writes to a hook's stdin
// and prints for `RUNTIME state ID`. Read here only, for both: `envhook hook` (stdin) and the
// shim's exec (the runtime's output, when the front could not read the bundle itself:
// docs/design.md#exec-and-the-sidecar-swap). One parse (lossless, depth-bounded) and one check, the
// schema (src/schemas/oci-state.schema.json). Running the runtime stays with its caller
// (src/shim/exec.ts), which owns its argv, env and when node:child_process is loaded: this
// module takes text.
import { EnvhookError, SchemaError } from '../errors.ts';
import { validateState } from '../schema.ts';
import { parseLossless } from './json.ts';

/** What the schema guarantees of a state; runc also prints rootfs, created and owner, left unread. */
export interface OciState {
  ociVersion?: string;
  id?: string;
  status?: string;
  pid?: number;
  bundle: string;
  annotations?: Readonly<Record<string, string>>;
}

/** State text as a typed state; otherwise one line `<where>…` naming the JSON path and what is wrong. */
export function parseState(text: string, where: string): OciState {
  const state = parseLossless(text, where);
  validateState(state, where);
  return state as unknown as OciState;
}

/**
 * The bundle from the state `command` (`RUNTIME state ID`) printed. Output that names no usable
 * bundle (not JSON, not an object, no "bundle", not a non-empty string) is said as that; any
 * other field of the wrong type by the schema's line.
 */
export function bundleFromStateOutput(output: string, command: string): string {
  try {
    return parseState(output, command).bundle;
  } catch (cause) {
    if (cause instanceof SchemaError && cause.at !== '/' && cause.at !== '/bundle') throw cause;
    throw new EnvhookError(`${command}: no "bundle" in its output`, { cause });
  }
}
