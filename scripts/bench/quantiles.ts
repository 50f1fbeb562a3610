/** Nearest-rank quantile of samples (sorted or not), for the bench suites. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** Rounds a figure for printing. */
export function round(value: number, digits = 3): number {
  return Number(value.toFixed(digits));
}
