// `envhook shim --help`: the shim takes runc's argv (commander never sees it), so its usage is
// printed here. The front (hooks/envhook-runtime) never passes `--help` alone: it execs the
// real runtime for that. The top-level help lists it (registerShimHelp) as it lists the others.
import type { Command } from 'commander';

/** `shim` in `envhook --help`'s list only: main.ts runs `envhook shim …` before commander. */
export function registerShimHelp(program: Command): void {
  program
    .command('shim')
    .description("the runtime front's entry point (hooks/envhook-runtime), with runc's arguments")
    .argument('[runc-arguments...]')
    .helpOption(false);
}

export const SHIM_USAGE = `Usage: envhook shim <runc arguments>

The runtime front's entry into envhook (docs/runtimes.md): hooks/envhook-runtime, which a runtime
runs in place of runc, starts it with runc's own arguments for \`create\` and \`run\` (the bundle's
envhook.io/ annotations applied to its config.json) and for \`exec\` into a container envhook
changed (the exec process given the same env). It exits 0 and the front then execs the real
runtime with the same arguments; on failure it prints one line \`envhook: …\` and exits 1.

Settings come from the environment and the config file only: ENVHOOK_CONFIG,
ENVHOOK_RUNTIME, ENVHOOK_KUBELET_ROOT, ENVHOOK_LOG_FILE, ENVHOOK_LOG_LEVEL, ENVHOOK_RUN_DIR.
`;
