// The two ways envhook is installed for a runtime, and the name each install is recorded under
// in state.json: the runtime handler (`containerd`) and the NRI plugin (`containerd-nri`) are
// separate installs, each removed by its own uninstall.
import type { Runtime } from './layout.ts';

export const MODES = ['shim', 'nri'] as const;
export type InstallMode = (typeof MODES)[number];
export type InstallKey = Runtime | `${Runtime}-nri`;

export function installKey(runtime: Runtime, mode: InstallMode | undefined): InstallKey {
  return mode === 'nri' ? `${runtime}-nri` : runtime;
}
