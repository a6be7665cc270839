// The capabilities envhook's file work needs as root, for a refusal that names the one missing.
// A container that drops ALL and adds only some (the NRI DaemonSet: docs/privileges.md) runs
// envhook as UID 0 without the rest, and the kernel then answers a chown, a chmod of a file given
// to another UID, or a read of another UID's file with a bare EPERM or EACCES. Where such an error
// meets a root process that lacks a capability the call needs (CapEff of /proc/self/status), the
// message says which and what to do; as root with every capability (a policy, a read-only mount)
// or as another user (errors.ts says "run as root"), nothing is added.
import fs from 'node:fs';

/** The capabilities of envhook's file work, by their number in linux/capability.h. */
const NUMBERS = { CHOWN: 0, DAC_OVERRIDE: 1, FOWNER: 3 } as const;

/**
 * - CHOWN: a volume file or an owned copy given to another UID;
 * - FOWNER: the owned copy's mode set after that chown, and its retired payload's times;
 * - DAC_OVERRIDE: an env file or a volume file another UID wrote, in a directory only it may enter
 *   (not DAC_READ_SEARCH, which would do for reading: docs/privileges.md says why).
 */
export type FileCapability = keyof typeof NUMBERS;

/** The effective set of the process whose /proc/<pid>/status text is `status`; undefined where it has none. */
export function effectiveSet(status: string): bigint | undefined {
  const hex = /^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1];
  return hex === undefined ? undefined : BigInt(`0x${hex}`);
}

/** Those of `needed` that the effective set `set` lacks. */
export function lacking(needed: readonly FileCapability[], set: bigint): FileCapability[] {
  return needed.filter((c) => (set & (1n << BigInt(NUMBERS[c]))) === 0n);
}

function ownStatus(): string {
  try {
    return fs.readFileSync('/proc/self/status', 'utf8');
  } catch {
    return '';
  }
}

/**
 * For `cause`, an error of a call that needs `needed`: `: envhook runs without CAP_X: add X to
 * its container's capabilities (docs/privileges.md)` when it is an EPERM or EACCES of a root
 * process lacking some of them; '' otherwise.
 */
export function capabilityHint(cause: unknown, needed: readonly FileCapability[], status: () => string = ownStatus): string {
  const code = (cause as NodeJS.ErrnoException | null | undefined)?.code;
  if ((code !== 'EPERM' && code !== 'EACCES') || process.geteuid?.() !== 0) return '';
  const set = effectiveSet(status());
  const missing = set === undefined ? [] : lacking(needed, set);
  if (missing.length === 0) return '';
  const caps = missing.map((c) => `CAP_${c}`).join(' and ');
  return `: envhook runs without ${caps}: add ${missing.join(', ')} to its container's capabilities (docs/privileges.md)`;
}
