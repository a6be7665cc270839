// Podman: the precreate file (full pipeline, before the runtime reads config.json) and the
// createRuntime file (ownership) in a hooks directory of envhook's own, named in a
// containers.conf.d drop-in. Setting hooks_dir replaces Podman's list, so the drop-in restates
// the list in force (the admin's, or Podman's defaults) and appends envhook's directory.
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError } from '../../errors.ts';
import { HOOK_FILES, PODMAN_DEFAULT_HOOKS_DIRS, PODMAN_MAIN_CONFIGS, type Layout } from '../layout.ts';
import { hookFile, type HookTemplates, type RuntimePlan } from '../targets.ts';
import { parseToml } from '../toml.ts';

export function podmanPlan(layout: Layout, templates: HookTemplates): RuntimePlan {
  const dirs = currentHooksDirs(layout).filter((d) => d !== layout.podmanHooksDir);
  dirs.push(layout.podmanHooksDir);
  const dropIn = [
    '# Written by envhook install; removed by envhook uninstall.',
    "# hooks_dir replaces Podman's list: the directories in force before install, then envhook's.",
    '[engine]',
    `hooks_dir = [${dirs.map((d) => JSON.stringify(d)).join(', ')}]`,
    '',
  ].join('\n');
  parseToml(dropIn, layout.config);
  return {
    files: [
      {
        file: path.posix.join(layout.podmanHooksDir, HOOK_FILES.precreate),
        content: hookFile(layout, 'precreate', templates.precreate),
        mode: 0o644,
      },
      {
        file: path.posix.join(layout.podmanHooksDir, HOOK_FILES.createRuntime),
        content: hookFile(layout, 'createRuntime', templates.createRuntime),
        mode: 0o644,
      },
      { file: layout.config, content: Buffer.from(dropIn), mode: 0o644 },
    ],
    blocks: [],
    // env entries are keyed by container name ("*" is for serviceLinks only), and Podman puts no
    // name into the OCI spec: the container is named with CRI-O's annotation
    next: [
      `podman run --annotation io.kubernetes.container.name=NAME --annotation '"envhook.io/env={""NAME"":[…]}"' … now goes through envhook (no restart needed)`,
    ],
  };
}

/** hooks_dir as Podman would load it (main files, then drop-ins in name order), the file `skip` (ours, by default; null: none) left out. */
export function currentHooksDirs(layout: Layout, skip: string | null = layout.config): string[] {
  const files = [...PODMAN_MAIN_CONFIGS];
  for (const main of PODMAN_MAIN_CONFIGS) {
    const dir = `${main}.d`;
    let names: string[] = [];
    try {
      names = fs
        .readdirSync(layout.real(dir))
        .filter((n) => n.endsWith('.conf'))
        .sort();
    } catch {
      /* no drop-in directory */
    }
    files.push(...names.map((n) => path.posix.join(dir, n)));
  }
  let dirs = PODMAN_DEFAULT_HOOKS_DIRS;
  for (const f of files) {
    if (f === skip) continue;
    let text: string;
    try {
      text = fs.readFileSync(layout.real(f), 'utf8');
    } catch {
      continue;
    }
    const hooks = (parseToml(text, f).engine as Record<string, unknown> | undefined)?.hooks_dir;
    if (hooks === undefined) continue;
    if (!Array.isArray(hooks) || hooks.some((d) => typeof d !== 'string'))
      throw new EnvhookError(`${f}: engine.hooks_dir is not a list of strings`);
    dirs = hooks as string[];
  }
  return [...dirs];
}
