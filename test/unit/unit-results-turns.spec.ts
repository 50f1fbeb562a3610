/**
 * A multi-unit Result is computed one unit per turn of the event loop (coordinator/kinds/unit-results.ts): each
 * unit's Result holds a posterior interval of a few milliseconds (tens on a cold process), so a suite's or a
 * matrix's units in one piece held the loop that long times their number. The same Results as before: each unit's
 * is computeRunResult of its own episodes, the headline of the population's.
 */
import assert from "node:assert/strict";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { headlineResult, unitResults } from "../../coordinator/kinds/unit-results.js";
import { kindModule } from "../../coordinator/kinds/registry.js";
import { computeRunResult } from "../../coordinator/runs/result-summary.js";
import { unitMeterContext } from "../../coordinator/runs/meters.js";
import { episodeRecordOf, type EpisodeRecord } from "../../coordinator/store/episodes-repo.js";
import type { RunUnit } from "../../coordinator/domain/units.js";
import { probeLoopHold } from "../support/loop-hold-probe.js";

const pins = loadFirmwarePins();
const UNITS = 12;
const unitOf = (i: number): RunUnit => ({
  key: `so101@3.11/tabletop@1/task-${i}`, robot: "so101@3.11", model: "so101", firmware: "3.11", environment: "tabletop@1", task: `pick-cube@v${i + 1}`, policy: {},
}) as RunUnit;

/** Unit `unit`'s 20 episodes over three cells, `successes` of them successes. */
function episodesOf(unit: number, successes: number): EpisodeRecord[] {
  return Array.from({ length: 20 }, (_, i) => ({
    ...episodeRecordOf({
      id: `ep_${unit}_${i}`, run_id: "run_m", idx: unit * 20 + i, status: "done", attempt: 1, seed: i, cell_id: `so101-${"bcd"[i % 3]}`,
      outcome: i < successes ? "success" : "failure", failure_cluster: null, duration_s: 20, reset_s: 4, replay_spec: null, meta: null, evaluation: null,
      interruptions: "[]", assigned_at: null, started_at: null, finished_at: null,
    }),
    unit,
  }));
}

describe("a multi-unit Result, one unit per turn of the event loop", () => {
  it("lets the loop turn between units and gives each unit the Result of its own episodes", async () => {
    const run = { id: "run_m", units: Array.from({ length: UNITS }, (_, i) => unitOf(i)), priority: "standard", request: {}, headlinePriors: null } as unknown as Parameters<typeof unitResults>[1];
    const episodes = Array.from({ length: UNITS }, (_, unit) => episodesOf(unit, 4 + unit)).flat();
    const ctx = { pins, baseUrl: "http://x" };

    const stop = probeLoopHold();
    const units = await unitResults(ctx, run, episodes);
    const headline = await headlineResult(ctx, run, episodes, units, { units: [0, 1], description: "the first two units" });
    const hold = stop();

    // The probe's 1 ms timer ran between the units (in one piece it ran at most once, after all of them).
    assert.ok(hold.ticks >= UNITS, `the event loop turned ${hold.ticks} times while ${UNITS} units' Results were computed`);
    assert.equal(units.length, UNITS);
    for (const [index, unit] of units.entries()) {
      const own = episodes.filter((e) => e.unit === index);
      const expected = computeRunResult("run_m", own, unitMeterContext(pins, run.units[index], "standard", `unit ${run.units[index].key}`), "http://x");
      assert.deepEqual([unit.key, unit.result.n, unit.result.success_rate, unit.result.ci95], [run.units[index].key, 20, (4 + index) / 20, expected.ci95]);
    }
    assert.equal(headline.n, 40);
    assert.equal(headline.success_rate, (4 + 5) / 40);
    assert.deepEqual(headline.population.units, [run.units[0].key, run.units[1].key]);
  });

  it("a threshold run's Result replays its soak phase's 640 episodes a few dozen per turn", async () => {
    const soak = 640;
    const run = {
      id: "run_t", kind: "threshold", units: [unitOf(0), { ...unitOf(0), key: "so101@3.11/tabletop@1/verify" }], priority: "standard", request: {}, headlinePriors: null,
      plan: { kind: { threshold: { target: 0.5, ci: 0.95, max_episodes: 10_000, monthly_cap_usd: 1000, on_verified_endpoint: null, on_verified_url: null, policy_stream_url: null } } },
      kindState: { phase: "soak" }, resolvedPins: { task: "pick-cube@v1" },
    } as unknown as Parameters<ReturnType<typeof kindModule>["result"]>[1];
    // Half successes at a target of one half: the test never decides, so the Result replays every episode.
    const episodes = Array.from({ length: soak }, (_, i) => ({ ...episodesOf(0, 10)[i % 20], id: `ep_t_${i}`, idx: i, outcome: i % 2 === 0 ? "success" : "failure", assign: { phase: "soak" } }) as EpisodeRecord);
    const stop = probeLoopHold();
    const result = await kindModule("threshold").result({ db: undefined as never, pins, baseUrl: "http://x" }, run, episodes) as { threshold: { soak: { n: number; decision: string } } };
    const hold = stop();
    assert.deepEqual([result.threshold.soak.n, result.threshold.soak.decision], [soak, "continue"]);
    assert.ok(hold.ticks >= soak / 64, `the event loop turned ${hold.ticks} times while ${soak} episodes were replayed`);
  });
});
