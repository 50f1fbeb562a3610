/**
 * The binomial distribution (pmf, both tails, computed in log space so n up to 1e5 is stable) and
 * the Clopper-Pearson exact interval for a single proportion.
 */

import { betaQuantile, logGamma } from "./special-functions.js";
import { zForConfidence } from "./wilson.js";

function checkCounts(k: number, n: number, p: number): void {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`n must be a non-negative integer; got ${n}`);
  if (!Number.isInteger(k)) throw new RangeError(`k must be an integer; got ${k}`);
  if (!(p >= 0 && p <= 1)) throw new RangeError(`p must be in [0, 1]; got ${p}`);
}

/** ln(n!) - ln(sqrt(2πn) (n/e)^n), the error of Stirling's formula (Loader 2000). */
function stirlingError(n: number): number {
  if (n <= 15) return logGamma(n + 1) - (n + 0.5) * Math.log(n) + n - 0.5 * Math.log(2 * Math.PI);
  const nn = n * n;
  const [s0, s1, s2, s3, s4] = [1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188];
  if (n > 500) return (s0 - s1 / nn) / n;
  if (n > 80) return (s0 - (s1 - s2 / nn) / nn) / n;
  if (n > 35) return (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / n;
  return (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n;
}

/** x ln(x / m) + m - x, by a series where x is near m so nothing cancels (Loader 2000). */
function deviance(x: number, m: number): number {
  if (Math.abs(x - m) < 0.1 * (x + m)) {
    let v = (x - m) / (x + m);
    let s = (x - m) * v;
    let ej = 2 * x * v;
    v *= v;
    for (let j = 1; j < 1000; j++) {
      ej *= v;
      const next = s + ej / (2 * j + 1);
      if (next === s) return next;
      s = next;
    }
    return s;
  }
  return x * Math.log(x / m) + m - x;
}

/**
 * ln P(X = k) for X ~ Binomial(n, p); -Infinity where the probability is 0. Uses Loader's (2000)
 * saddle-point form, as R's dbinom does: no large log-factorials are subtracted, so the relative
 * error stays near machine precision at n = 1e5 and beyond.
 */
export function binomialLogPmf(k: number, n: number, p: number): number {
  checkCounts(k, n, p);
  if (k < 0 || k > n) return -Infinity;
  if (p === 0) return k === 0 ? 0 : -Infinity;
  if (p === 1) return k === n ? 0 : -Infinity;
  if (k === 0) return n * Math.log1p(-p);
  if (k === n) return n * Math.log(p);
  const q = 1 - p;
  const lc = stirlingError(n) - stirlingError(k) - stirlingError(n - k) - deviance(k, n * p) - deviance(n - k, n * q);
  const lf = Math.log(2 * Math.PI) + Math.log(k) + Math.log1p(-k / n);
  return lc - 0.5 * lf;
}

/** P(X = k) for X ~ Binomial(n, p). */
export function binomialPmf(k: number, n: number, p: number): number {
  return Math.exp(binomialLogPmf(k, n, p));
}

/**
 * Sum of pmf terms from `start` walking in `step` (+1 or -1) to the end of the support, where the
 * terms only shrink along the walk. Starts from the largest term and stops once the rest cannot
 * matter, so the small tail keeps its full relative precision.
 */
function monotoneTail(start: number, step: 1 | -1, n: number, p: number): number {
  const logFirst = binomialLogPmf(start, n, p);
  if (logFirst === -Infinity) return 0;
  const odds = p / (1 - p);
  let term = 1;
  let sum = 1;
  for (let i = start; step === 1 ? i < n : i > 0; i += step) {
    // pmf(i+1)/pmf(i) = (n-i)/(i+1) * p/(1-p)
    term *= step === 1 ? ((n - i) / (i + 1)) * odds : (i / (n - i + 1)) / odds;
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return Math.exp(logFirst + Math.log(sum));
}

/** P(X <= k) for X ~ Binomial(n, p). The smaller tail is summed directly, the other by complement. */
export function binomialCdf(k: number, n: number, p: number): number {
  checkCounts(k, n, p);
  if (k < 0) return 0;
  if (k >= n) return 1;
  if (p === 0) return 1;
  if (p === 1) return 0;
  const mode = Math.floor((n + 1) * p);
  if (k < mode) return Math.min(1, monotoneTail(k, -1, n, p));
  return Math.max(0, 1 - monotoneTail(k + 1, 1, n, p));
}

/** P(X >= k) for X ~ Binomial(n, p), accurate when it is tiny (where 1 - cdf would round to 0). */
export function binomialUpperTail(k: number, n: number, p: number): number {
  checkCounts(k, n, p);
  if (k <= 0) return 1;
  if (k > n) return 0;
  if (p === 0) return 0;
  if (p === 1) return 1;
  const mode = Math.floor((n + 1) * p);
  if (k > mode) return Math.min(1, monotoneTail(k, 1, n, p));
  return Math.max(0, 1 - monotoneTail(k - 1, -1, n, p));
}

/**
 * Clopper-Pearson (1934) "exact" interval for k successes out of n at confidence `ci`: the bounds
 * are Beta quantiles, lower = B(α/2; k, n-k+1), upper = B(1-α/2; k+1, n-k). Coverage is at least
 * `ci` for every true p (conservative), unlike Wilson whose coverage is nominal on average.
 */
export function clopperPearson(k: number, n: number, ci = 0.95): [number, number] {
  zForConfidence(ci); // validates ci
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`n must be a non-negative integer; got ${n}`);
  if (!Number.isInteger(k) || k < 0 || k > n) throw new RangeError(`k must be an integer in 0..${n}; got ${k}`);
  if (n === 0) return [0, 1];
  const alpha = 1 - ci;
  const lower = k === 0 ? 0 : betaQuantile(alpha / 2, k, n - k + 1);
  const upper = k === n ? 1 : betaQuantile(1 - alpha / 2, k + 1, n - k);
  return [lower, upper];
}
