/**
 * After an episode of a task judged by a person, when the run names a judge (docs/judges.md): the
 * cell sends the judge the episode's final frame of each camera, the instruction and the task, and
 * decides whether a person must also judge it:
 * - `audit`: the episode is in the run's audit sample (drawn from its seed, protocol/judge/judge-spec.ts);
 * - `low_confidence`: the verdict's confidence is below the run's threshold;
 * - `judge_failed`: the judge did not answer a verdict (timeout, HTTP error, malformed answer).
 * `review` null: the judge's verdict decides alone. Never throws: a failing judge sends the episode to a person.
 */
import type { CameraFrame } from "../hardware/types.js";
import { callJudge } from "../../protocol/judge/judge-client.js";
import { inAuditSample, type JudgeSpec } from "../../protocol/judge/judge-spec.js";
import type { JudgeVerdict } from "../../protocol/judge/judge-wire.js";
import { splitPersonJudged } from "../../protocol/predicates/index.js";
import type { EpisodeAssignment } from "./assignment.js";

export type JudgeReview = "audit" | "low_confidence" | "judge_failed";

export interface JudgeStep {
  verdict: JudgeVerdict | null;
  /** Why the judge gave no verdict, in words; null when it did. */
  error: string | null;
  audit: boolean;
  /** Why a person must also judge the episode; null when the verdict decides alone. */
  review: JudgeReview | null;
  /** Seconds the judge took. */
  latencyS: number;
}

export interface JudgeStepInput {
  spec: JudgeSpec;
  episodeSeed: number;
  task: string;
  instruction: string | null;
  cell: string;
  frames: ReadonlyArray<{ camera: string; frame: CameraFrame }>;
  signal?: AbortSignal;
}

export async function judgeEpisode(input: JudgeStepInput): Promise<JudgeStep> {
  const audit = inAuditSample(input.episodeSeed, input.spec.auditFraction);
  const started = Date.now();
  const latency = () => Math.round((Date.now() - started) / 10) / 100;
  try {
    const verdict = await callJudge(input.spec.url, {
      task: input.task, instruction: input.instruction, cell: input.cell,
      frames: input.frames.map(({ camera, frame }) => ({ camera, width: frame.width, height: frame.height, jpeg: frame.jpeg })),
    }, input.spec.timeoutMs, input.signal);
    const low = verdict.confidence < input.spec.confidenceThreshold;
    return { verdict, error: null, audit, review: audit ? "audit" : low ? "low_confidence" : null, latencyS: latency() };
  } catch (error) {
    return { verdict: null, error: (error as Error).message, audit, review: "judge_failed", latencyS: latency() };
  }
}

/** The judge's part of the episode's evaluation JSON (`judge`), as the coordinator reads it. */
export function judgeEvaluation(step: JudgeStep, threshold: number): Record<string, unknown> {
  return {
    success: step.verdict?.success ?? null,
    confidence: step.verdict?.confidence ?? null,
    reason: step.verdict?.reason ?? null,
    error: step.error,
    audit: step.audit,
    low_confidence: step.verdict !== null && step.verdict.confidence < threshold,
    latency_s: step.latencyS,
  };
}

/** The run's judge's verdict on a finished episode of a task judged by a person, logged; undefined without a judge. */
export async function judgeIfNamed(assignment: EpisodeAssignment, instruction: string | null, frames: ReadonlyArray<{ camera: string; frame: CameraFrame }>, cell: string, signal: AbortSignal, log: (line: string) => void): Promise<JudgeStep | undefined> {
  if (!assignment.judge) return undefined;
  if (splitPersonJudged({ success_predicates: assignment.task.successPredicates }).personJudged.length === 0) return undefined;
  const step = await judgeEpisode({
    spec: assignment.judge, episodeSeed: assignment.seed, task: assignment.task.rev ?? assignment.task.name, instruction, cell, frames, signal,
  });
  const said = step.verdict ? `${step.verdict.success ? "success" : "failure"} at confidence ${step.verdict.confidence}` : `no verdict (${step.error})`;
  log(`episode ${assignment.episodeId}: the judge said ${said} in ${step.latencyS} s${step.review ? `; a person judges it too (${step.review.replace("_", " ")})` : ""}`);
  return step;
}
