// Types for scripts/codebase-stats.mjs, so TypeScript tests can import it.
export type Layer = readonly [name: string, paths: readonly string[]];
export const LAYERS: readonly Layer[];
export interface Import {
  from: string;
  to: string;
}
export interface BackArrow extends Import {
  fromLayer: string | undefined;
  toLayer: string;
}
export interface FolderCycle {
  folders: string[];
  imports: Import[];
}
export interface CodebaseStats {
  files: number;
  medianLines: number;
  imports: number;
  unassigned: string[];
  backArrows: BackArrow[];
  folderCycles: FolderCycle[];
  withLogic: number;
  mirrored: number;
  untested: string[];
  readmeBytes: number;
}
export function layerOf(rel: string): number;
export function sourceFiles(root: string): string[];
export function importsOf(root: string, files: readonly string[]): Import[];
export function folderCycles(edges: readonly Import[]): FolderCycle[];
export function analyze(root: string): CodebaseStats;
