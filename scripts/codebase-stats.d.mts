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
export interface FileCircle {
  files: string[];
  imports: Import[];
}
export interface FunctionLength {
  file: string;
  name: string;
  line: number;
  lines: number;
}
export interface CodebaseStats {
  files: number;
  medianLines: number;
  imports: number;
  unassigned: string[];
  backArrows: BackArrow[];
  folderCycles: FolderCycle[];
  fileCircles: FileCircle[];
  functions: FunctionLength[];
  withLogic: number;
  mirrored: number;
  untested: string[];
  readmeBytes: number;
}
export function layerOf(rel: string): number;
export function sourceFiles(root: string): string[];
export function importsOf(root: string, files: readonly string[]): Import[];
export function folderCycles(edges: readonly Import[]): FolderCycle[];
export function fileCircles(edges: readonly Import[]): FileCircle[];
export function functionLengths(rel: string, text: string): FunctionLength[];
export function analyze(root: string): CodebaseStats;
