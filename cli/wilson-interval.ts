/**
 * The Wilson score interval, for the running success rate `runs watch` shows while a run is going
 * (the final figures come from the Run's `result`, which accounts for differences between cells).
 * Standalone on purpose: the command line imports nothing from coordinator/.
 */

/** z for a two-sided 95% interval. */
const Z95 = 1.959963984540054;

/** The 95% Wilson interval of `successes` out of `n`; null when n is 0. */
export function wilson95(successes: number, n: number): [number, number] | null {
  if (n <= 0) return null;
  const p = successes / n;
  const z2 = Z95 * Z95;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const half = (Z95 * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denominator;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}
