// What uninstall takes out of the run directory (the `runDir` setting, /run/envhook) once no NRI
// install is left: the stopped plugin's status file and the records of the pods it watched
// (`nri-owners/`, read only by the next plugin process). Only when the status file's supervisor
// no longer runs (the uninstall stopped it, or it was gone): a plugin still running keeps its
// state. Owned copies stay: running containers read them (docs/ownership.md). The shim's
// `owners/` records stay too: `envhook watch` reads them while the pods run.
import fs from 'node:fs';
import path from 'node:path';
import { EnvhookError, errnoReason } from '../errors.ts';
import { procStat } from '../nri/proc-stat.ts';
import { readStatus, statusPath } from '../nri/status-file.ts';
import { NRI_RECORDS, recordsDir } from '../watch/run-dir.ts';
import type { Layout } from './layout.ts';

/** The run-state paths (host paths) there now that uninstall removes, once the plugin is stopped. */
export function nriRunState(layout: Layout, runDir: string): string[] {
  return [statusPath(runDir), recordsDir(runDir, NRI_RECORDS)].filter((p) => fs.existsSync(layout.real(p)));
}

/**
 * True when the status file's supervisor may still run: its pid with the start time the file
 * recorded, or, in a file from before start times were recorded, the pid alone (its state is kept).
 */
function supervisorRuns(layout: Layout, runDir: string): boolean {
  return supervisorOf(layout, runDir, false) !== undefined;
}

/** The pid of the status file's supervisor while it surely runs (its recorded start time matches), else undefined: the one to signal. */
export function runningSupervisor(layout: Layout, runDir: string): number | undefined {
  return supervisorOf(layout, runDir, true);
}

/** The status file's supervisor pid while it runs; `exact`: only with a recorded start time that matches. */
function supervisorOf(layout: Layout, runDir: string, exact: boolean): number | undefined {
  let status;
  try {
    status = readStatus(layout.real(runDir));
  } catch {
    return undefined; // not a status file: nothing runs that wrote it
  }
  if (!status) return undefined;
  const stat = procStat(status.pid, layout.real('/proc'));
  if (stat === undefined || stat.state === 'Z') return undefined;
  const same = status.pidStartTicks === undefined ? !exact : stat.startTicks === status.pidStartTicks;
  return same ? status.pid : undefined;
}

/**
 * Removes the run state of a plugin that no longer runs; the paths removed. A plugin still
 * running keeps it (an empty list); the run directory goes too when that leaves it empty.
 */
export function removeNriRunState(layout: Layout, runDir: string): string[] {
  const paths = nriRunState(layout, runDir);
  if (paths.length === 0 || supervisorRuns(layout, runDir)) return [];
  for (const p of paths) {
    try {
      fs.rmSync(layout.real(p), { recursive: true, force: true });
    } catch (cause) {
      throw new EnvhookError(`cannot remove ${p}: ${errnoReason(cause)}: remove it by hand`, { cause });
    }
  }
  try {
    fs.rmdirSync(layout.real(runDir));
    paths.push(runDir);
  } catch {
    /* not empty (owned copies, the shim's records): kept */
  }
  return paths.map((p) => path.normalize(p));
}
