// The systemd unit of `envhook watch` on a node with the runtime handler (containerd, CRI-O): the
// shim gives a container its own copy of each owned volume, and only a resident process follows
// the kubelet's rewrites into new copies (docs/design.md#ownership). install writes the unit (a
// file of the install, shared by the two runtimes' handler installs, removed by the last
// uninstall) and prints what the admin types to enable it: install never runs systemctl (under
// --root, or in the installer's pod, it would talk to no node's systemd).
import path from 'node:path';
import type { Layout } from './layout.ts';
import type { Target } from './targets.ts';

export const WATCH_UNIT = '/etc/systemd/system/envhook-watch.service';
const UNIT_NAME = path.posix.basename(WATCH_UNIT);

export function watchUnitTarget(layout: Layout): Target {
  const text = [
    '# Written by envhook install; removed by envhook uninstall.',
    "# envhook watch keeps the owners of volumes (envhook.io/volumeOwners) across the kubelet's",
    '# rewrites for the containers the runtime handler "envhook" started.',
    '[Unit]',
    "Description=envhook owner watcher (volume owners across the kubelet's rewrites)",
    'After=local-fs.target',
    '',
    '[Service]',
    `ExecStart=${layout.bin} watch`,
    'Restart=always',
    'RestartSec=1',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
  return { file: WATCH_UNIT, content: Buffer.from(text), mode: 0o644 };
}

/** install's next step for the unit. */
export const WATCH_START = `start the owner watcher: systemctl daemon-reload && systemctl enable --now ${UNIT_NAME}`;

/** uninstall's next step once the unit file is gone (systemd still has it loaded). */
export const WATCH_STOP = `stop the owner watcher: systemctl disable --now ${UNIT_NAME} && systemctl daemon-reload`;
