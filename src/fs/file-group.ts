// The group an admin names for envhook's own files (the setting fileGroup: log files and
// nri-status.json, which name pods, containers and a Secret's keys): those files are then 0640
// with that group, for a log shipper or a monitoring agent that runs as a member, instead of
// 0600. A GID, or a group name looked up in /etc/group (the node's: envhook runs on it).
import fs from 'node:fs';
import { EnvhookError } from '../errors.ts';

const GROUP_FILE = '/etc/group';

/** The GID of `group` (digits: as is); EnvhookError naming the setting when there is no such group. */
export function groupId(group: string, groupFile = GROUP_FILE): number {
  if (/^[0-9]{1,10}$/.test(group) && Number(group) <= 2147483647) return Number(group);
  let text = '';
  try {
    text = fs.readFileSync(groupFile, 'utf8');
  } catch {
    // no group file: no name resolves
  }
  for (const line of text.split('\n')) {
    const [name, , gid] = line.split(':');
    if (name === group && gid !== undefined && /^[0-9]+$/.test(gid)) return Number(gid);
  }
  throw new EnvhookError(
    `fileGroup ${JSON.stringify(group)} (--file-group, ENVHOOK_FILE_GROUP): no such group in ${groupFile}: name a group of the node or its GID`,
  );
}

/** The mode and group of envhook's own files: 0600, or 0640 with the named group. */
export function fileAccess(group: string | undefined): { mode: number; gid: number | undefined } {
  return group === undefined ? { mode: 0o600, gid: undefined } : { mode: 0o640, gid: groupId(group) };
}
