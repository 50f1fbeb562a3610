/** The agent's decision of a finished episode's outcome from its instruments, a person's label and a judge. */
import assert from "node:assert/strict";
import { episodeVerdict, type LabelStep } from "../../cell-agent/episode/episode-verdict.js";
import type { JudgeStep } from "../../cell-agent/episode/judge-step.js";
import type { EpisodeResult } from "../../cell-agent/episode/runner.js";

type Finished = Extract<EpisodeResult, { kind: "finished" }>;

/** A finished episode whose instruments found `cube_lifted` as given and a person-judged `tidy` never satisfied. */
function finished(cubeLifted: boolean, failureCluster = cubeLifted ? "" : "grasp_miss"): Finished {
  return {
    kind: "finished", outcome: cubeLifted ? "success" : "failure", failureCluster, durationS: 5, resetS: 1,
    evaluation: {
      success: cubeLifted,
      stages: { grasp: { reached: cubeLifted, atS: cubeLifted ? 2.5 : undefined } },
      predicates: { cube_lifted: { satisfied: cubeLifted, atS: cubeLifted ? 3 : undefined }, tidy: { satisfied: false } },
    },
    events: [], interventions: [], meta: {}, mcapPath: "/x.mcap", videos: [], finalFrames: [],
  } as unknown as Finished;
}

const noPerson: LabelStep = { asked: false, personJudged: [], label: null, waitedS: 0 };
const asked = (label: LabelStep["label"], waitedS = 12.5): LabelStep => ({ asked: true, personJudged: ["tidy"], label, waitedS });
const judged = (success: boolean, review: JudgeStep["review"]): JudgeStep => ({ verdict: { success, confidence: 0.9, reason: null }, error: null, audit: review === "audit", review, latencyS: 0.2 });
const JUDGE = { url: "http://127.0.0.1:1/judge", confidenceThreshold: 0.7 } as never;

describe("episode verdict (instruments, a person's label, a judge)", () => {
  it("keeps the instruments' outcome when no predicate is judged by a person", () => {
    const v = episodeVerdict(finished(false), noPerson, undefined, undefined);
    assert.equal(v.outcome, "failure");
    assert.equal(v.failureCluster, "grasp_miss");
    assert.deepEqual(v.evaluation, { stages: { grasp: false }, predicates: { cube_lifted: false, tidy: false }, stage_at_s: {}, predicate_at_s: {} });
  });

  it("needs the person's success and every instrument predicate for success; a person's failure is judged_failure", () => {
    const ok = episodeVerdict(finished(true), asked({ success: true, progress: 90, note: "neat" }), undefined, undefined);
    assert.equal(ok.outcome, "success");
    assert.equal(ok.failureCluster, "");
    assert.deepEqual(ok.evaluation.label, { judged_by: "human", success: true, progress: 90, note: "neat", waited_s: 12.5 });
    assert.deepEqual(ok.evaluation.predicate_at_s, { cube_lifted: 3 });
    const said = episodeVerdict(finished(true), asked({ success: false, progress: null, note: null }), undefined, undefined);
    assert.deepEqual([said.outcome, said.failureCluster], ["failure", "judged_failure"]);
    // The person says success but an instrument predicate failed: the instruments' cluster.
    const instruments = episodeVerdict(finished(false), asked({ success: true, progress: null, note: null }), undefined, undefined);
    assert.deepEqual([instruments.outcome, instruments.failureCluster], ["failure", "grasp_miss"]);
  });

  it("is unlabelled when nobody answered and no confident judge spoke", () => {
    const v = episodeVerdict(finished(true), asked(null, 600), undefined, undefined);
    assert.equal(v.outcome, "unlabelled");
    assert.deepEqual(v.evaluation.label, { judged_by: null, waited_s: 600 });
    const unsure = episodeVerdict(finished(true), asked(null, 600), judged(true, "low_confidence"), JUDGE);
    assert.equal(unsure.outcome, "unlabelled");
    assert.equal((unsure.evaluation.judge as { success: boolean }).success, true, "the judge's answer is kept beside the missing label");
  });

  it("lets a confident judge decide, with a person's time only when a person was asked too", () => {
    const alone = episodeVerdict(finished(true), { ...asked(null), asked: false, waitedS: 0 }, judged(false, null), JUDGE);
    assert.deepEqual([alone.outcome, alone.failureCluster], ["failure", "judged_failure"]);
    assert.deepEqual(alone.evaluation.label, { judged_by: "judge", success: false });
    const audit = episodeVerdict(finished(true), asked(null, 30), judged(true, "audit"), JUDGE);
    assert.equal(audit.outcome, "success");
    assert.deepEqual(audit.evaluation.label, { judged_by: "judge", success: true, waited_s: 30 });
    // A person's label outranks the judge.
    const person = episodeVerdict(finished(true), asked({ success: false, progress: null, note: null }), judged(true, "audit"), JUDGE);
    assert.equal(person.outcome, "failure");
  });

  it("never lets a policy error pass as success", () => {
    const v = episodeVerdict(finished(true, "policy_error"), asked({ success: true, progress: null, note: null }), undefined, undefined);
    assert.deepEqual([v.outcome, v.failureCluster], ["failure", "policy_error"]);
  });
});
