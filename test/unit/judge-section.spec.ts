/**
 * The Result's judge section (docs/judges.md) from stored episodes: who decided, the audit sample's
 * confusion counts and kappa, low-confidence episodes left out of agreement, judge failures counted.
 */
import assert from "node:assert/strict";
import { operatorTimeSection } from "../../coordinator/reports/operator-time-section.js";
import { operatorSections } from "../../coordinator/runs/operator-time.js";
import type { EpisodeRecord } from "../../coordinator/store/episodes-repo.js";

const base = {
  runId: "run_1", attempt: 1, seed: 1, failureCluster: null, durationS: 10, resetS: 1, operatorResetS: null, replaySpec: null, meta: null,
  interruptions: [] as EpisodeRecord["interruptions"], assignedAt: null, startedAt: null, unit: 0, assign: {}, cellId: "so101-b", finishedAt: "2026-11-27T10:00:00.000Z",
};
let idx = 0;
/** An episode the judge saw: `human` is the person's label (undefined: none), `judge` the verdict (null: the judge failed). */
function episode(o: { judge: boolean | null; confidence?: number; audit?: boolean; low?: boolean; human?: boolean; status?: EpisodeRecord["status"] }): EpisodeRecord {
  const i = idx++;
  const status = o.status ?? "done";
  const byHuman = o.human !== undefined;
  const decided = byHuman ? o.human : o.judge;
  return {
    ...base, id: `ep_${i}`, idx: i, status,
    outcome: status === "done" ? (decided ? "success" : "failure") : null,
    label: status !== "done" ? { judgedBy: null, progress: null, note: null, waitedS: 60 }
      : byHuman ? { judgedBy: "human", progress: 50, note: null, waitedS: 5 } : { judgedBy: "judge", progress: null, note: null, waitedS: null },
    evaluation: {
      ...(byHuman ? { label: { judged_by: "human", success: o.human } } : {}),
      judge: { success: o.judge, confidence: o.judge === null ? null : o.confidence ?? 0.9, error: o.judge === null ? "the judge at http://x answered HTTP 503" : null, audit: o.audit ?? false, low_confidence: o.low ?? false },
    },
  };
}

describe("the judge's section of a Result", () => {
  it("counts the audit sample's confusion table and its kappa, and leaves low-confidence episodes out", () => {
    const episodes = [
      // Audit sample: 3 both success, 1 judge-only success, 1 human-only success, 3 both failure.
      ...[1, 2, 3].map(() => episode({ judge: true, audit: true, human: true })),
      episode({ judge: true, audit: true, human: false }),
      episode({ judge: false, audit: true, human: true }),
      ...[1, 2, 3].map(() => episode({ judge: false, audit: true, human: false })),
      // Decided by the judge alone, an unsure one a person overruled, a failed call, and an unlabelled unsure one.
      episode({ judge: true }), episode({ judge: false }),
      episode({ judge: true, confidence: 0.4, low: true, human: false }),
      episode({ judge: null, human: true }),
      episode({ judge: false, confidence: 0.3, low: true, status: "unlabelled" }),
    ];
    const labels = operatorSections(episodes).labels!;
    assert.equal(labels.judged_by, "mixed");
    assert.equal(labels.judged, 2);
    assert.equal(labels.labelled, 10);
    const judge = labels.judge!;
    assert.deepEqual({ asked: judge.asked, decided: judge.decided, audited: judge.audited, low: judge.low_confidence, failed: judge.failed }, { asked: 13, decided: 2, audited: 8, low: 2, failed: 1 });
    assert.deepEqual(judge.agreement.confusion, { both_success: 3, judge_success_human_failure: 1, judge_failure_human_success: 1, both_failure: 3 });
    // po = 6/8, both raters say success half the time: pe = 0.5, kappa = 0.5.
    assert.equal(judge.agreement.n, 8);
    assert.equal(judge.agreement.agreement_rate, 0.75);
    assert.equal(judge.agreement.cohen_kappa, 0.5);
    const [lo, hi] = judge.agreement.kappa_ci95!;
    assert.ok(lo < 0.5 && hi > 0.5 && lo >= -1 && hi <= 1);
  });

  it("says judge when the judge decided every counted episode, and has no kappa without an audit", () => {
    idx = 0;
    const labels = operatorSections([episode({ judge: true }), episode({ judge: false })]).labels!;
    assert.equal(labels.judged_by, "judge");
    assert.equal(labels.labelled, 0);
    assert.equal(labels.judge!.agreement.n, 0);
    assert.equal(labels.judge!.agreement.cohen_kappa, null);
    assert.equal(labels.judge!.agreement.kappa_ci95, null);
  });

  it("counts no labelling time for episodes the judge decided with nobody asked", () => {
    idx = 0;
    const section = operatorTimeSection([episode({ judge: true }), episode({ judge: false, audit: true, human: false })])!;
    assert.equal(section.label.count, 1, "only the audited episode waited for a person");
    assert.equal(section.label.s_total, 5);
  });
});
