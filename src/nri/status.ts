// PLACEHOLDER until the status module lands: the status model only.
export interface NriCounts { registrations: number; workerRestarts: number; hangs: number; adjusted: number; empty: number;
  refused: number; errors: number; missed: number; evicted: number; ownerRechowns: number }
export interface NriStatus {
  version: 1;
  pid: number;
  workerPid?: number;
  startedAt: string;
  plugin: string;
  socket?: string;
  connected: boolean;
  since: string;
  runtime?: { name: string; version: string };
  nriVersion?: string;
  counts: NriCounts;
  lastError?: { at: string; message: string };
  updatedAt: string;
}
