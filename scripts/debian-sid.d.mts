// Types for scripts/debian-sid.mjs, so TypeScript tests can import it.
export function sidCacheDir(): string;
export function sidPackages<N extends string>(names: readonly N[]): Record<N, string>;
export function sidPackage(name: string): string;
export function sidVersion(name: string): string;
export function sidClosure(tree: string, names: readonly string[], keep: RegExp): string;
