/**
 * Normalization statistics as LeRobot's `compute_stats.py` computes them: per episode
 * `get_feature_stats` (min, max, mean, std, count and the quantiles q01..q99 that
 * `RunningQuantileStats` estimates from a 5000-bin histogram), and across episodes
 * `aggregate_feature_stats` (count-weighted mean and variance, quantile envelopes).
 *
 * Arithmetic is float64 throughout where LeRobot keeps float32 data in float32, so values agree
 * to float32 precision rather than bit for bit.
 */

export const QUANTILES = [
  ["q01", 0.01],
  ["q10", 0.1],
  ["q50", 0.5],
  ["q90", 0.9],
  ["q99", 0.99],
] as const;
export type QuantileKey = (typeof QUANTILES)[number][0];
export type StatKey = "min" | "max" | "mean" | "std" | "count" | QuantileKey;
/** The order LeRobot's stats dicts have, and so its `stats/<feature>/<stat>` columns. */
export const STAT_KEYS: readonly StatKey[] = ["min", "max", "mean", "std", "count", ...QUANTILES.map(([key]) => key)];

/** One feature's statistics, one entry per dimension (per channel for images). */
export type FeatureStats = { count: number } & Record<Exclude<StatKey, "count">, number[]>;

/** `RunningQuantileStats(num_quantile_bins=5000)`. */
const QUANTILE_BINS = 5000;

/**
 * The histogram `RunningQuantileStats` fills in one `update`: bins between min - 1e-10 and
 * max + 1e-10 (numpy `linspace`), a value counted in the last bin whose left edge it reaches
 * (numpy `histogram` with explicit edges), quantiles interpolated inside a bin.
 */
class QuantileHistogram {
  private readonly counts = new Float64Array(QUANTILE_BINS);
  private readonly first: number;
  private readonly last: number;
  private readonly step: number;

  constructor(min: number, max: number) {
    this.first = min - 1e-10;
    this.last = max + 1e-10;
    this.step = (this.last - this.first) / QUANTILE_BINS;
  }

  private edge(k: number): number {
    return k === QUANTILE_BINS ? this.last : k * this.step + this.first;
  }

  add(value: number, weight = 1): void {
    if (this.step === 0) {
      // All edges coincide: numpy counts every value in the last bin.
      this.counts[QUANTILE_BINS - 1] += weight;
      return;
    }
    let k = Math.min(QUANTILE_BINS - 1, Math.max(0, Math.floor((value - this.first) / this.step)));
    while (k > 0 && this.edge(k) > value) k--;
    while (k < QUANTILE_BINS - 1 && this.edge(k + 1) <= value) k++;
    this.counts[k] += weight;
  }

  /** `_compute_single_quantile` at `q * total`. */
  quantile(q: number, total: number): number {
    const target = q * total;
    let cumulative = 0;
    for (let idx = 0; idx < QUANTILE_BINS; idx++) {
      const before = cumulative;
      cumulative += this.counts[idx];
      if (cumulative < target) continue;
      if (idx === 0) return this.edge(0);
      const inBin = cumulative - before;
      if (inBin === 0) return this.edge(idx);
      return this.edge(idx) + ((target - before) / inBin) * (this.edge(idx + 1) - this.edge(idx));
    }
    return this.edge(QUANTILE_BINS);
  }
}

function emptyStats(count: number): FeatureStats {
  const stats = { count, min: [], max: [], mean: [], std: [] } as unknown as FeatureStats;
  for (const [key] of QUANTILES) stats[key] = [];
  return stats;
}

/**
 * Statistics of weighted samples of one dimension: `values[i]` seen `weights[i]` times (1 when
 * `weights` is absent). `count` is what LeRobot reports as `count`, which for images is the number
 * of sampled frames rather than pixels.
 */
function dimensionStats(stats: FeatureStats, values: ArrayLike<number>, weights: ArrayLike<number> | undefined): void {
  let total = 0;
  let sum = 0;
  let sumSquares = 0;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const w = weights ? weights[i] : 1;
    if (w === 0) continue;
    const v = values[i];
    total += w;
    sum += v * w;
    sumSquares += v * v * w;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const mean = sum / total;
  stats.min.push(min);
  stats.max.push(max);
  stats.mean.push(mean);
  // LeRobot's variance: mean of squares minus squared mean, clipped at 0.
  stats.std.push(Math.sqrt(Math.max(0, sumSquares / total - mean * mean)));
  if (total < 2) {
    // `_compute_basic_stats`: too few samples for a histogram, quantiles are the mean.
    for (const [key] of QUANTILES) stats[key].push(mean);
    return;
  }
  const histogram = new QuantileHistogram(min, max);
  for (let i = 0; i < values.length; i++) {
    const w = weights ? weights[i] : 1;
    if (w !== 0) histogram.add(values[i], w);
  }
  for (const [key, q] of QUANTILES) stats[key].push(histogram.quantile(q, total));
}

/**
 * Per-dimension statistics of a `rows x width` row-major table (`get_feature_stats(axis=0)`).
 */
export function columnStats(values: Float64Array, rows: number, width: number): FeatureStats {
  if (values.length !== rows * width) throw new Error(`columnStats expects ${rows} x ${width} = ${rows * width} values; got ${values.length}`);
  const stats = emptyStats(rows);
  const column = new Float64Array(rows);
  for (let j = 0; j < width; j++) {
    for (let i = 0; i < rows; i++) column[i] = values[i * width + j];
    dimensionStats(stats, column, undefined);
  }
  return stats;
}

const LEVELS = Float64Array.from({ length: 256 }, (_, v) => v);

/**
 * Per-channel statistics of 8-bit pixels given as level counts (`counts[channel * 256 + level]`),
 * scaled to 0..1 as `compute_episode_stats` does for RGB images; `frames` is the number of sampled
 * frames the pixels came from.
 */
export function channelStatsFromCounts(counts: Float64Array, channels: number, frames: number): FeatureStats {
  if (counts.length !== channels * 256) throw new Error(`channelStatsFromCounts expects ${channels} x 256 counts; got ${counts.length}`);
  const stats = emptyStats(frames);
  for (let c = 0; c < channels; c++) dimensionStats(stats, LEVELS, counts.subarray(c * 256, (c + 1) * 256));
  for (const key of STAT_KEYS) if (key !== "count") stats[key] = stats[key].map((v) => v / 255);
  return stats;
}

/** `aggregate_feature_stats([a, b])`: what `save_episode` does to fold an episode into the dataset's stats. */
export function aggregateStats(a: FeatureStats, b: FeatureStats): FeatureStats {
  const total = a.count + b.count;
  const out = emptyStats(total);
  for (let j = 0; j < a.mean.length; j++) {
    const mean = (a.mean[j] * a.count + b.mean[j] * b.count) / total;
    const variance = ((a.std[j] ** 2 + (a.mean[j] - mean) ** 2) * a.count + (b.std[j] ** 2 + (b.mean[j] - mean) ** 2) * b.count) / total;
    out.min.push(Math.min(a.min[j], b.min[j]));
    out.max.push(Math.max(a.max[j], b.max[j]));
    out.mean.push(mean);
    out.std.push(Math.sqrt(variance));
    // Quantiles cannot be merged; LeRobot keeps an envelope: min for q <= 50, max above.
    for (const [key, q] of QUANTILES) out[key].push(q <= 0.5 ? Math.min(a[key][j], b[key][j]) : Math.max(a[key][j], b[key][j]));
  }
  return out;
}
