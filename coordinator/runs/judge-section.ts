/**
 * The judge endpoint's part of a Result (`labels.judge`, docs/judges.md): how often the judge decided,
 * was unsure or failed, and its agreement with people on the audit sample: Cohen's kappa with its 95%
 * interval (Fleiss, Cohen & Everitt 1969 large-sample SE; stats/cohen-kappa.ts) and the 2×2 confusion
 * counts. Only audited episodes count towards agreement: they were drawn from the episodes' seeds
 * whatever the judge said, whereas low-confidence episodes were picked by the judge's own doubt and
 * would understate its agreement. Where both a person and the judge judged an episode, the person's
 * label decided it (the episode's `judged_by` is "human").
 */
import { cohenKappa } from "../stats/cohen-kappa.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";

/** The judge's verdict as the cell put it in the evaluation JSON (`judge`), read defensively. */
export interface JudgeRecord {
  success: boolean | null;
  confidence: number | null;
  error: string | null;
  audit: boolean;
  lowConfidence: boolean;
}

export function judgeRecordOf(episode: Pick<EpisodeRecord, "evaluation">): JudgeRecord | null {
  const j = episode.evaluation?.judge as Record<string, unknown> | undefined;
  if (!j || typeof j !== "object") return null;
  return {
    success: typeof j.success === "boolean" ? j.success : null,
    confidence: typeof j.confidence === "number" && j.confidence >= 0 && j.confidence <= 1 ? j.confidence : null,
    error: typeof j.error === "string" ? j.error.slice(0, 500) : null,
    audit: j.audit === true,
    lowConfidence: j.low_confidence === true,
  };
}

export interface JudgeAgreement {
  /** Audited episodes with both a judge's verdict and a person's label. */
  n: number;
  agreement_rate: number | null;
  cohen_kappa: number | null;
  kappa_ci95: [number, number] | null;
  kappa_se: number | null;
  method: "cohen-kappa-fleiss-cohen-everitt-1969";
  confusion: { both_success: number; judge_success_human_failure: number; judge_failure_human_success: number; both_failure: number };
}

export interface JudgeSection {
  /** Episodes the judge was asked about (counted and unlabelled). */
  asked: number;
  /** Counted episodes whose outcome the judge's verdict decided alone. */
  decided: number;
  audited: number;
  low_confidence: number;
  /** Episodes the judge gave no verdict on (timeout, HTTP error, malformed answer): a person judged them. */
  failed: number;
  agreement: JudgeAgreement;
}

const round4 = (x: number | null): number | null => (x === null ? null : Math.round(x * 1e4) / 1e4);

/** The section over a run's counted (done) and unlabelled episodes; null when no judge was asked. */
export function judgeSection(episodes: readonly EpisodeRecord[]): JudgeSection | null {
  const judged = episodes
    .filter((e) => e.status === "done" || e.status === "unlabelled")
    .flatMap((e) => {
      const judge = judgeRecordOf(e);
      return judge ? [{ e, judge }] : [];
    });
  if (judged.length === 0) return null;
  const confusion = { both_success: 0, judge_success_human_failure: 0, judge_failure_human_success: 0, both_failure: 0 };
  for (const { e, judge } of judged) {
    if (!judge.audit || judge.success === null || e.status !== "done" || e.label?.judgedBy !== "human" || e.outcome === null) continue;
    // The person's label is the episode's outcome only when the task has no instrument predicate that failed;
    // the label itself is what is compared.
    const human = (e.evaluation?.label as { success?: unknown } | undefined)?.success;
    if (typeof human !== "boolean") continue;
    if (judge.success && human) confusion.both_success++;
    else if (judge.success) confusion.judge_success_human_failure++;
    else if (human) confusion.judge_failure_human_success++;
    else confusion.both_failure++;
  }
  const kappa = cohenKappa({
    both: confusion.both_success, onlyA: confusion.judge_success_human_failure, onlyB: confusion.judge_failure_human_success, neither: confusion.both_failure,
  });
  return {
    asked: judged.length,
    decided: judged.filter(({ e }) => e.status === "done" && e.label?.judgedBy === "judge").length,
    audited: judged.filter(({ judge }) => judge.audit).length,
    low_confidence: judged.filter(({ judge }) => judge.lowConfidence).length,
    failed: judged.filter(({ judge }) => judge.success === null).length,
    agreement: {
      n: kappa.n, agreement_rate: round4(kappa.agreement_rate), cohen_kappa: round4(kappa.kappa),
      kappa_ci95: kappa.ci ? [round4(kappa.ci[0])!, round4(kappa.ci[1])!] : null, kappa_se: round4(kappa.se),
      method: "cohen-kappa-fleiss-cohen-everitt-1969", confusion,
    },
  };
}
