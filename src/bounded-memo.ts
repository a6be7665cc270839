// What a resident process remembers between requests (parsed annotations, digests, decoded env
// files): a map bounded in entries and in the summed size of what it holds, the oldest entry
// dropped first. A value larger than the whole size bound is not kept.

export class BoundedMemo<V> {
  readonly #entries = new Map<string, { value: V; size: number }>();
  #held = 0;
  readonly #maxEntries: number;
  readonly #maxSize: number;

  constructor(maxEntries: number, maxSize: number) {
    this.#maxEntries = maxEntries;
    this.#maxSize = maxSize;
  }

  get(key: string): V | undefined {
    return this.#entries.get(key)?.value;
  }

  /** Keeps `value` under `key` (as the newest), then drops the oldest entries past the bounds. */
  set(key: string, value: V, size: number): void {
    this.delete(key);
    if (size > this.#maxSize) return;
    this.#entries.set(key, { value, size });
    this.#held += size;
    for (const old of this.#entries.keys()) {
      if (this.#entries.size <= this.#maxEntries && this.#held <= this.#maxSize) break;
      this.delete(old);
    }
  }

  delete(key: string): void {
    const e = this.#entries.get(key);
    if (e === undefined) return;
    this.#entries.delete(key);
    this.#held -= e.size;
  }
}
