/**
 * A finished episode's outcome, failure cluster and evaluation as the agent reports them: from what the
 * instruments found (the runner's result), the judge's verdict if the run names a judge, and a person's label if
 * the task is judged by a person. Pure: agent.ts gathers the three and sends what this returns.
 */
import type { EpisodeAssignment } from "./assignment.js";
import { judgeEvaluation, type JudgeStep } from "./judge-step.js";
import type { OperatorLabel } from "./label-gate.js";
import type { EpisodeResult } from "./runner.js";

/** What waiting for a person's label came to (agent.ts `awaitLabel`). */
export interface LabelStep {
  /** Whether a person was asked (an Attention "label" went out, or would have without an operator). */
  asked: boolean;
  /** The task's predicates a person judges; none: the instruments alone decide. */
  personJudged: string[];
  label: OperatorLabel | null;
  waitedS: number;
}

export interface EpisodeVerdict {
  outcome: string;
  failureCluster: string;
  /** The evaluation JSON of EpisodeFinished. */
  evaluation: Record<string, unknown>;
}

/**
 * A task judged by a person: its instrument predicates (if any) and the person's label must all say success.
 * With a judge: the person's label wherever there is one, else the judge's verdict unless it was too unsure.
 */
export function episodeVerdict(result: Extract<EpisodeResult, { kind: "finished" }>, label: LabelStep, judged: JudgeStep | undefined, judge: EpisodeAssignment["judge"]): EpisodeVerdict {
  const decided = label.personJudged.length > 0;
  const judgeDecides = !label.label && judged?.verdict && judged.review !== "low_confidence" ? judged.verdict : null;
  const verdict = label.label ?? judgeDecides;
  const instrumentsOk = Object.entries(result.evaluation.predicates).every(([name, p]) => label.personJudged.includes(name) || p.satisfied)
    && result.failureCluster !== "policy_error";
  const outcome = !decided ? result.outcome : verdict === null ? "unlabelled" : instrumentsOk && verdict.success ? "success" : "failure";
  const failureCluster = !decided ? result.failureCluster : outcome !== "failure" ? "" : !instrumentsOk ? result.failureCluster || "unclassified" : "judged_failure";
  const evaluation = {
    stages: Object.fromEntries(Object.entries(result.evaluation.stages).map(([k, v]) => [k, v.reached])),
    predicates: Object.fromEntries(Object.entries(result.evaluation.predicates).map(([k, v]) => [k, v.satisfied])),
    stage_at_s: Object.fromEntries(Object.entries(result.evaluation.stages).filter(([, v]) => v.atS !== undefined).map(([k, v]) => [k, v.atS])),
    predicate_at_s: Object.fromEntries(Object.entries(result.evaluation.predicates).filter(([, v]) => v.atS !== undefined).map(([k, v]) => [k, v.atS])),
    ...(decided ? {
      label: label.label
        ? { judged_by: "human", success: label.label.success, progress: label.label.progress, note: label.label.note, waited_s: label.waitedS }
        : judgeDecides
          // waited_s only when a person was asked too (an audit nobody answered): a person's time, not the judge's.
          ? { judged_by: "judge", success: judgeDecides.success, ...(label.asked ? { waited_s: label.waitedS } : {}) }
          : { judged_by: null, waited_s: label.waitedS },
    } : {}),
    ...(judged && judge ? { judge: judgeEvaluation(judged, judge.confidenceThreshold) } : {}),
  };
  return { outcome, failureCluster, evaluation };
}
