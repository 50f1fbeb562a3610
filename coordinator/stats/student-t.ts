/**
 * Student's t distribution: its CDF and quantile from the regularized incomplete beta, for the
 * critical values of intervals estimated from a few clusters (t on clusters - 1 degrees of freedom).
 *
 * For T ~ t(ν) and t >= 0, P(T > t) = I_x(ν/2, 1/2) / 2 with x = ν / (ν + t²) (Abramowitz & Stegun
 * 1964, §26.7); the quantile inverts that through the Beta quantile, which is bisection on a
 * monotone function, so it cannot fail to converge. Matches tabulated quantiles to 1e-9 or better.
 */

import { betaQuantile, logIncompleteBetaPair } from "./special-functions.js";

function checkDf(df: number): void {
  if (!(df > 0) || !Number.isFinite(df)) throw new RangeError(`degrees of freedom must be a positive finite number; got ${df}`);
}

/** P(T <= t) for T ~ Student t with `df` degrees of freedom. */
export function studentTCdf(t: number, df: number): number {
  checkDf(df);
  if (Number.isNaN(t)) throw new RangeError(`t must be a number; got ${t}`);
  if (t === 0) return 0.5;
  if (!Number.isFinite(t)) return t > 0 ? 1 : 0;
  const x = df / (df + t * t);
  // Half the two-sided tail, computed on the side where it is small.
  const tail = 0.5 * Math.exp(logIncompleteBetaPair(x, df / 2, 0.5).logLower);
  return t > 0 ? 1 - tail : tail;
}

/** The p-quantile of Student t with `df` degrees of freedom, e.g. (0.975, 3) -> 3.182446305. */
export function studentTQuantile(p: number, df: number): number {
  checkDf(df);
  if (!(p > 0 && p < 1)) throw new RangeError(`p must be in (0, 1); got ${p}`);
  if (p === 0.5) return 0;
  const tail = p > 0.5 ? 1 - p : p;
  // P(|T| > t) = 2·tail = I_x(ν/2, 1/2) with x = ν / (ν + t²).
  const x = betaQuantile(2 * tail, df / 2, 0.5);
  const t = Math.sqrt((df * (1 - x)) / x);
  return p > 0.5 ? t : -t;
}

/** Two-sided Student t critical value for confidence `ci` on `df` degrees of freedom. */
export function tForConfidence(ci: number, df: number): number {
  if (!(ci > 0 && ci < 1)) throw new RangeError(`confidence must be in (0, 1); got ${ci}`);
  return studentTQuantile(1 - (1 - ci) / 2, df);
}
