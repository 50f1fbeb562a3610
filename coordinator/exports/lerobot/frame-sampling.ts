/**
 * Which camera frames and pixels LeRobot's `compute_stats.py` looks at for an episode's image
 * statistics: `sample_indices` (about len**0.75 frames, at least 100, spread evenly) and
 * `auto_downsample_height_width` (every f-th pixel once a side reaches 300 px).
 */

/** `estimate_num_samples(dataset_len)` with LeRobot's defaults. */
export function sampleCount(frames: number, minSamples = 100, maxSamples = 10_000, power = 0.75): number {
  const floor = frames < minSamples ? frames : minSamples;
  return Math.max(floor, Math.min(Math.trunc(frames ** power), maxSamples));
}

/** numpy's `round`: halves go to the even neighbour. */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** `sample_indices(data_len)`: `round(linspace(0, len - 1, n))`. */
export function sampleIndices(frames: number): number[] {
  if (frames <= 0) return [];
  const n = sampleCount(frames);
  if (n === 1) return [0];
  const step = (frames - 1) / (n - 1);
  return Array.from({ length: n }, (_, i) => (i === n - 1 ? frames - 1 : roundHalfEven(i * step)));
}

/** The stride `auto_downsample_height_width` keeps pixels at (1: every pixel). */
export function downsampleFactor(widthPx: number, heightPx: number, targetPx = 150, thresholdPx = 300): number {
  if (Math.max(widthPx, heightPx) < thresholdPx) return 1;
  return Math.trunc((widthPx > heightPx ? widthPx : heightPx) / targetPx);
}
