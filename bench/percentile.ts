// The value at `fraction` of an ascending list, as every percentile the benchmark prints reads
// it: the element at floor(fraction × n), so that of 100 delays the p99 is the largest (at the
// thousands of samples a run takes, one rank from nearest-rank). NaN for an empty list.
export function percentileOf (sorted: readonly number[], fraction: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!
}
