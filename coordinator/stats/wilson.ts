/**
 * Wilson score interval for a binomial proportion, and the episode count that an
 * `auto(ci=..., moe=...)` request needs.
 */

/** Two-sided standard normal quantile for confidence `ci` (e.g. 0.95 -> 1.959964). */
export function zForConfidence(ci: number): number {
  if (!(ci > 0 && ci < 1)) throw new RangeError(`confidence must be in (0, 1); got ${ci}`);
  return normalQuantile(1 - (1 - ci) / 2);
}

/** Wilson score interval [lower, upper] for `successes` out of `n` at confidence `ci`. */
export function wilsonInterval(successes: number, n: number, ci = 0.95): [number, number] {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`n must be a non-negative integer; got ${n}`);
  if (!Number.isInteger(successes) || successes < 0 || successes > n) {
    throw new RangeError(`successes must be an integer in 0..${n}; got ${successes}`);
  }
  if (n === 0) return [0, 1];
  return wilsonScoreInterval(successes, n, n, zForConfidence(ci));
}

/**
 * Wilson's score interval of the rate successes / n, evaluated at a (possibly real-valued,
 * effective) sample size `atN` with critical value `critical` (z, or t for a clustered rate).
 */
export function wilsonScoreInterval(successes: number, n: number, atN: number, critical: number): [number, number] {
  const p = successes / n;
  const c2 = critical * critical;
  const denominator = 1 + c2 / atN;
  const centre = (p + c2 / (2 * atN)) / denominator;
  const half = (critical / denominator) * Math.sqrt((p * (1 - p)) / atN + c2 / (4 * atN * atN));
  // At 0 or n successes the bounds are exactly 0 or 1; the formula leaves rounding dust there.
  const lower = successes === 0 ? 0 : Math.max(0, centre - half);
  const upper = successes === n ? 1 : Math.min(1, centre + half);
  return [lower, upper];
}

/**
 * Smallest n whose Wilson interval half-width is at most `moe` at confidence `ci`, for a planning
 * rate `p` (0.5, the worst case, unless the caller knows better). ci=0.95, moe=0.05 gives 381.
 */
export function wilsonSampleSize(ci: number, moe: number, p = 0.5): number {
  if (!(moe > 0 && moe < 1)) throw new RangeError(`moe must be in (0, 1); got ${moe}`);
  const z = zForConfidence(ci);
  const halfWidth = (n: number) => {
    const z2 = z * z;
    return (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  };
  // Half-width falls monotonically in n: double to bracket, then bisect.
  let high = 1;
  while (halfWidth(high) > moe) high *= 2;
  let low = Math.max(1, Math.floor(high / 2));
  while (low < high) {
    const mid = Math.floor((low + high) / 2);
    if (halfWidth(mid) <= moe) high = mid;
    else low = mid + 1;
  }
  return low;
}

/** Inverse standard normal CDF (Acklam's rational approximation, refined by one Halley step). */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`p must be in (0, 1); got ${p}`);
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const pLow = 0.02425;
  let x: number;
  if (p < pLow) {
    const q = Math.sqrt(-2 * Math.log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - pLow) {
    const q = p - 0.5;
    const r = q * q;
    x = ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const e = 0.5 * erfc(-x / Math.SQRT2) - p;
  const u = e * Math.sqrt(2 * Math.PI) * Math.exp((x * x) / 2);
  return x - u / (1 + (x * u) / 2);
}

/** Complementary error function (Numerical Recipes' erfcc, relative error below 1.2e-7). */
export function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851513 + t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0 ? r : 2 - r;
}
