// A status as the `envhook nri` supervisor writes it (src/nri/status-file.ts), for the status file,
// metrics, endpoint and `envhook status` tests.
import { emptyCounts, type NriStatus } from '../../../src/nri/status-file.ts';

export function sampleStatus(over: Partial<NriStatus> = {}): NriStatus {
  return {
    version: 1,
    pid: process.pid,
    workerPid: process.pid,
    startedAt: '2026-11-26T10:00:00.000Z',
    plugin: '50-envhook',
    socket: '/var/run/nri/nri.sock',
    connected: true,
    since: '2026-11-26T10:00:00.250Z',
    runtime: { name: 'containerd', version: '2.1.9' },
    nriVersion: 'v0.8.0',
    counts: { ...emptyCounts(), registrations: 1, adjusted: 3, empty: 12 },
    updatedAt: '2026-11-26T10:05:00.000Z',
    ...over,
  };
}
