/**
 * A run's Result and the sections its ending adds (interventions, operator time, labels, invalidated attempts) are
 * computed a slice of episodes per turn of the event loop (computeRunResultInTurns, interventionSummaryInTurns,
 * operatorSectionsInTurns): a 10,000-episode run's passes in one piece held the coordinator's loop 35-90 ms
 * (test/integration/large-run-requests.spec.ts). Each gives what the one-piece function gives, to the bit, over
 * episodes that vary in everything the sections read; and the loop turns while they run.
 */
import assert from "node:assert/strict";
import { mulberry32 } from "../../protocol/prng.js";
import { interventionSummary, interventionSummaryInTurns } from "../../coordinator/runs/interventions.js";
import { operatorSections, operatorSectionsInTurns } from "../../coordinator/runs/operator-time.js";
import { computeRunResult, computeRunResultInTurns, RESULT_EPISODES_PER_TURN, type RunResultOptions } from "../../coordinator/runs/result-summary.js";
import { DEFAULT_HEADLINE_PRIOR } from "../../coordinator/stats/beta-binomial-rate.js";
import { episodeRecordOf, type EpisodeRecord, type EpisodeRow } from "../../coordinator/store/episodes-repo.js";

const EPISODES = 2_600;
const context = { tier: "soak", environmentClass: "standard", priority: "burst" } as const;

/** Episodes of every kind the sections tell apart, drawn from seed `seed`. */
function variedEpisodes(seed: number): EpisodeRecord[] {
  const random = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  return Array.from({ length: EPISODES }, (_, idx) => {
    const status = pick(["done", "done", "done", "done", "done", "pending", "unlabelled", "running"] as const);
    const finished = status === "done" || status === "unlabelled";
    const outcome = status === "done" ? pick(["success", "failure"] as const) : null;
    const stages = random() < 0.8
      ? (random() < 0.5 ? { reached: random() < 0.9, grasped: random() < 0.6, lifted: random() < 0.5 } : { grasped: random() < 0.5, placed: random() < 0.3 })
      : undefined;
    const judge = random() < 0.15 ? { success: pick([true, false, null]), confidence: random(), audit: random() < 0.5, low_confidence: random() < 0.2 } : undefined;
    const interventions = random() < 0.12
      ? Array.from({ length: 1 + Math.floor(random() * 2) }, () => ({
        t_s: random() * 20, kind: pick(["on_stall", "scripted"]), ...(random() < 0.5 ? { by: "operator", waited_s: random() * 9, started_at: "2026-11-01T10:00:00.000Z", ended_at: "2026-11-01T10:00:07.500Z" } : {}),
      }))
      : undefined;
    const interruptions = random() < 0.1
      ? [{
        attempt: 1, cell: pick(["so101-b", "so101-c"]), reason: random() < 0.5 ? "invalidated" : "link_lost", detail: "", at: `2026-11-01T0${Math.floor(random() * 9)}:00:00.000Z`,
        duration_s: random() * 30, ...(random() < 0.5 ? { operator_reset_s: random() * 40 } : {}),
        ...(random() < 0.5 ? { invalidated: { reason: "scene_disturbed", note: random() < 0.5 ? "bumped" : null, outcome: pick(["success", "failure", null]) } } : {}),
      }]
      : [];
    const human = status === "done" && random() < 0.3;
    const row: EpisodeRow = {
      id: `ep_${idx}`, run_id: "run_x", idx, status, attempt: 1 + interruptions.length, seed: idx, cell_id: pick(["so101-b", "so101-c", "so101-d", null]),
      outcome, failure_cluster: outcome === "failure" ? pick(["drop", "missed_grasp", null]) : null,
      duration_s: finished ? 3 + random() * 17 : null, reset_s: finished ? random() * 5 : null,
      operator_reset_s: finished && random() < 0.3 ? random() * 60 : null,
      judged_by: human ? "human" : status === "done" && judge && random() < 0.5 ? "judge" : null,
      progress: human && random() < 0.7 ? Math.floor(random() * 101) : null, label_note: human ? "slid" : null,
      // An unlabelled episode whose cell did not say how long it waited has no label at all.
      operator_label_s: human || (status === "unlabelled" && random() < 0.7) ? random() * 30 : null,
      replay_spec: null,
      meta: interventions ? JSON.stringify({ interventions }) : JSON.stringify({ cameras: ["top"] }),
      evaluation: stages || judge ? JSON.stringify({ ...(stages ? { stages } : {}), ...(judge ? { judge } : {}), ...(human ? { label: { success: random() < 0.5 } } : {}) }) : null,
      interruptions: JSON.stringify(interruptions), assigned_at: null, started_at: null, finished_at: finished ? "2026-11-01T12:00:00.000Z" : null,
    };
    return { ...episodeRecordOf(row), unit: idx % 3 };
  });
}

/** Runs `work`, counting the turns of the event loop that happen meanwhile. */
async function countingTurns<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const value = await work();
  running = false;
  return { value, turns };
}

describe("a run's Result and its ending's sections, a slice of episodes per turn", () => {
  const optionsOf: RunResultOptions[] = [
    {},
    { interventions: "on_stall", requestedCi: 0.9 },
    { headlinePrior: { ...DEFAULT_HEADLINE_PRIOR, icc: { family: "beta", parameters: { a: 2, b: 18 } }, source: "fitted on earlier runs", fitted_on_runs: 12, fitted_at: "2026-11-01T00:00:00.000Z" } },
  ];

  for (const seed of [1, 2, 3]) {
    it(`the Result in turns is the Result in one piece, to the bit (seed ${seed})`, async () => {
      const episodes = variedEpisodes(seed);
      const options = optionsOf[seed - 1]!;
      const whole = computeRunResult("run_x", episodes, context, "http://x", options);
      const { value, turns } = await countingTurns(() => computeRunResultInTurns("run_x", episodes, context, "http://x", options));
      assert.deepEqual(value, whole);
      // And in the same order: the stages, the funnel and the failure clusters as first seen.
      assert.equal(JSON.stringify(value), JSON.stringify(whole));
      assert.ok(whole.n > 1000 && Object.keys(whole.stages).length === 4 && whole.cells.by_cell.length === 4, JSON.stringify(whole.cells.by_cell));
      assert.ok(turns >= Math.ceil(EPISODES / RESULT_EPISODES_PER_TURN) - 1, `the event loop turned ${turns} times`);
    });

    it(`the interventions and operator sections in turns are the ones in one piece (seed ${seed})`, async () => {
      const episodes = variedEpisodes(seed);
      const done = episodes.filter((e) => e.status === "done");
      for (const withUnits of [false, true]) {
        const { value, turns } = await countingTurns(() => interventionSummaryInTurns("on_stall", episodes, withUnits));
        assert.equal(JSON.stringify(value), JSON.stringify(interventionSummary("on_stall", done, withUnits)));
        assert.ok(value.count > 100 && value.assisted_successes > 10, JSON.stringify({ count: value.count, assisted: value.assisted_successes }));
        assert.ok(turns >= 2, `the event loop turned ${turns} times`);
      }
      const whole = operatorSections(episodes);
      const { value, turns } = await countingTurns(() => operatorSectionsInTurns(episodes));
      assert.equal(JSON.stringify(value), JSON.stringify(whole));
      assert.ok(whole.operator_time && whole.invalidated && whole.labels?.judge && whole.labels.unlabelled.length > 100 && whole.labels.progress,
        "every section is present, so each was compared");
      assert.ok(turns >= 2, `the event loop turned ${turns} times`);
    });
  }
});
