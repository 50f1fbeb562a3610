/**
 * A run's `judge` (docs/judges.md) as the cell uses it: the coordinator validates the run's field
 * (coordinator/runs/run-schemas.ts, `Judge`) and sends it to the cell inside task_json under `judge`,
 * snake_case; this is the one place it becomes typed. Also the audit draw, so the coordinator and
 * the cell (and a replay) agree which episodes are audited.
 */
import { mulberry32 } from "../prng.js";

export interface JudgeSpec {
  url: string;
  /** A verdict with confidence below this also goes to a person. */
  confidenceThreshold: number;
  /** Share of episodes that also go to a person whatever the judge's confidence (the audit sample). */
  auditFraction: number;
  timeoutMs: number;
}

export const JUDGE_DEFAULTS = { confidence_threshold: 0.8, audit_fraction: 0.1, timeout_s: 10 } as const;

/** task_json `judge` to a JudgeSpec; undefined when absent; throws naming the field when malformed. */
export function parseJudgeSpec(raw: unknown): JudgeSpec | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== "object" || Array.isArray(raw)) throw new Error(`task judge must be an object; got ${JSON.stringify(raw)?.slice(0, 80)}`);
  const j = raw as Record<string, unknown>;
  const share = (value: unknown, field: string, fallback: number): number => {
    const v = value ?? fallback;
    if (typeof v !== "number" || !(v >= 0 && v <= 1)) throw new Error(`task judge.${field} must be a number from 0 to 1; got ${JSON.stringify(v)}`);
    return v;
  };
  if (typeof j.url !== "string" || !/^https?:\/\//.test(j.url)) throw new Error(`task judge.url must be an http(s) URL; got ${JSON.stringify(j.url)?.slice(0, 120)}`);
  const timeoutS = j.timeout_s ?? JUDGE_DEFAULTS.timeout_s;
  if (typeof timeoutS !== "number" || !(timeoutS > 0 && timeoutS <= 60)) throw new Error(`task judge.timeout_s must be a number of seconds in (0, 60]; got ${JSON.stringify(timeoutS)}`);
  return {
    url: j.url,
    confidenceThreshold: share(j.confidence_threshold, "confidence_threshold", JUDGE_DEFAULTS.confidence_threshold),
    auditFraction: share(j.audit_fraction, "audit_fraction", JUDGE_DEFAULTS.audit_fraction),
    timeoutMs: Math.round(timeoutS * 1000),
  };
}

/**
 * Whether the episode with this seed is in the audit sample: a draw of mulberry32 seeded with the
 * episode's seed (mixed with a fixed salt, so it is independent of the layout drawn from the same seed)
 * below `fraction`. Every attempt of an episode draws the same; the sample's size is binomial(n, fraction).
 */
export function inAuditSample(episodeSeed: number, fraction: number): boolean {
  if (fraction >= 1) return true;
  if (fraction <= 0) return false;
  return mulberry32((episodeSeed ^ 0x6a75_6467) >>> 0)() < fraction;
}
