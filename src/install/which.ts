// An executable on PATH, as a shell would find it (for the runtimes' own binaries, which install
// asks for their reading of the configuration).
import fs from 'node:fs';
import path from 'node:path';

export function onPath(name: string, envPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of envPath.split(':')) {
    const p = path.join(dir || '.', name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      /* not here */
    }
  }
  return undefined;
}
