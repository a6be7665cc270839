// Types for scripts/debian-sid.mjs, so TypeScript tests can import it.
export type DebianSuite = 'sid' | 'trixie';
export const SUITES: readonly DebianSuite[];
export function debianCacheDir(suite: DebianSuite): string;
export function debianPackages<N extends string>(suite: DebianSuite, names: readonly N[]): Record<N, string>;
export function debianVersion(suite: DebianSuite, name: string): string;
export function sidCacheDir(): string;
export function sidPackages<N extends string>(names: readonly N[]): Record<N, string>;
export function sidPackage(name: string): string;
export function sidVersion(name: string): string;
export function sidClosure(tree: string, names: readonly string[], keep: RegExp): string;
