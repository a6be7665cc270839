// The run directory uninstall cleans (run-state.ts): `--run-dir`, else the node's settings file
// (ENVHOOK_CONFIG's, else /etc/envhook/config.json under --root) as every envhook on the node
// reads it, else /run/envhook. A settings file that cannot be read is not a reason to refuse an
// uninstall: the default is used.
import fs from 'node:fs';
import { DEFAULT_CONFIG_FILE, parseSettingsFile } from '../settings.ts';
import { DEFAULT_RUN_DIR } from '../watch/run-dir.ts';
import { absolute, type Layout } from './layout.ts';

export function nodeRunDir(layout: Layout, flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (flag !== undefined) return absolute(flag, '--run-dir');
  const named = env.ENVHOOK_CONFIG;
  try {
    const file = named || layout.real(DEFAULT_CONFIG_FILE);
    return parseSettingsFile(fs.readFileSync(file, 'utf8'), named || DEFAULT_CONFIG_FILE).runDir ?? DEFAULT_RUN_DIR;
  } catch {
    return DEFAULT_RUN_DIR;
  }
}
