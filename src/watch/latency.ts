// A latency histogram in seconds with fixed bucket bounds (Prometheus' cumulative `le` buckets),
// for the copies' update latency: the kubelet's swap to the copy's. Bounded: a few numbers.

/** Upper bounds in seconds: 1 ms to 5 s. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5] as const;

export interface LatencySnapshot {
  /** Cumulative counts per bound of LATENCY_BUCKETS (observations ≤ bound). */
  buckets: number[];
  sum: number;
  count: number;
}

export interface Latency {
  observe(seconds: number): void;
  snapshot(): LatencySnapshot;
}

export function createLatency(): Latency {
  const counts: number[] = LATENCY_BUCKETS.map(() => 0);
  let sum = 0;
  let count = 0;
  return {
    observe(seconds) {
      const i = LATENCY_BUCKETS.findIndex((b) => seconds <= b);
      if (i >= 0) counts[i]!++;
      sum += seconds;
      count++;
    },
    snapshot() {
      let acc = 0;
      return { buckets: counts.map((c) => (acc += c)), sum, count };
    },
  };
}
