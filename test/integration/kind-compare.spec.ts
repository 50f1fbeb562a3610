/**
 * Kind `compare` end to end on the simulated fleet: two reference policies, paired episodes with the
 * same initial conditions on the same cell (blocking by cell), per-policy Results and the paired
 * comparison (the model-level claim checked against an independent computation); the sequential variant
 * stops early; the verification report (JSON and PDF) of a compare run.
 */
import assert from "node:assert/strict";
import { differenceConfidenceSequence, pairsForPower, sequentialCompareOperatingCharacteristics } from "../../coordinator/stats/sequential-compare.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { pairedCellReference } from "../support/paired-cell-reference.js";
import { runEnd, type TestService } from "./helpers.js";

const policy = (image: string) => ({
  type: "container",
  image,
  action_space: { type: "joint_position", dim: 6 },
  observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions"] },
});

/**
 * Pairs of the first test: three (were six, then four). What it checks (each pair's two episodes from one seed on one
 * cell, the per-policy Results, the paired difference against an independent computation, the report) holds at any
 * count, and every count below is this one. At four, every pair was discordant (the expert succeeded, the novice
 * failed, 8 simulated s) and the pairs ran on both cells; the first three are the same pairs (deterministic seeds).
 */
const PAIRS = 3;

const COMPARE = {
  kind: "compare",
  robot: "so101@3.11",
  environment: "tabletop@1",
  task: "pick-cube@v1",
  episodes: PAIRS,
  policies: { expert: policy("assay/ref-policy:expert"), novice: policy("assay/ref-policy:novice") },
  paired: true,
  perturbation: { layout_jitter_mm: 10, seed: 4242 },
};

describe("kind compare on a simulated fleet", function () {
  this.timeout(300_000);
  let service: TestService;

  useSharedFleet(["so101-b", "so101-c"], (shared) => (service = shared));

  it("runs both policies from the same seeds in each pair and reports per-policy Results and the paired difference", async () => {
    const created = await service.api("/v1/runs", { method: "POST", json: COMPARE });
    assert.equal(created.status, 201, await created.clone().text());
    const run = (await created.json()) as Record<string, any>;
    assert.equal(run.kind, "compare");
    assert.deepEqual(run.units.map((u: any) => u.key), ["policy:expert", "policy:novice"]);
    assert.ok(run.policies.expert && run.policies.novice);

    const done = (await runEnd(service, run.id)).run;
    assert.equal(done.status, "completed", JSON.stringify(done.status_detail));
    const result = done.result;
    assert.equal(result.units.length, 2);
    // The top level is policy A's own rate, never the two policies pooled; the run's cost is both.
    assert.deepEqual(result.population.units, ["policy:expert"]);
    assert.equal(result.n, PAIRS);
    assert.equal(result.success_rate, result.units[0].result.success_rate);
    assert.deepEqual(result.ci95, result.units[0].result.ci95);
    assert.ok(Math.abs(result.cost_usd - (result.units[0].result.cost_usd + result.units[1].result.cost_usd)) <= 0.011);
    for (const unit of result.units) {
      assert.equal(unit.result.n, PAIRS);
      // The model-level interval over the cells that ran the unit's episodes, one cell or several.
      assert.equal(unit.result.interval_method, "beta-binomial-posterior");
      assert.ok(unit.result.cost_usd > 0);
    }
    const c = result.comparison;
    assert.equal(c.a, "expert");
    assert.equal(c.b, "novice");
    assert.equal(c.pairs, PAIRS);
    assert.equal(c.both + c.only_a + c.only_b + c.neither, PAIRS);
    const rateA = result.units[0].result.success_rate;
    const rateB = result.units[1].result.success_rate;
    // About these cells: the paired interval over complete pairs, whose difference is the two rates'.
    assert.equal(c.these_cells.claim, "these_cells");
    assert.equal(c.these_cells.method, "newcombe-paired");
    assert.ok(Math.abs(c.these_cells.diff - (rateA - rateB)) < 1e-9, `diff ${c.these_cells.diff} = ${rateA} - ${rateB}`);
    assert.ok(c.these_cells.ci[0] <= c.these_cells.diff && c.these_cells.diff <= c.these_cells.ci[1]);
    // About the model: the within-cell differences with a cell-to-cell random effect.
    assert.equal(c.claim, "model");
    assert.equal(c.method, "paired-cell-random-effects-posterior");
    assert.ok(c.ci[0] <= c.diff && c.diff <= c.ci[1]);
    assert.equal(c.mcnemar.b, c.only_a);
    assert.equal(c.mcnemar.c, c.only_b);
    assert.ok(c.mcnemar.p_value > 0 && c.mcnemar.p_value <= 1);
    assert.equal(result.stopped_early, false);
    assert.ok(Math.abs(result.cost_usd - result.units[0].result.cost_usd - result.units[1].result.cost_usd) < 0.011);

    // Same initial conditions within a pair: each layout seed appears once per policy.
    const list = (await (await service.api(`/v1/runs/${run.id}/episodes`)).json()) as { data: any[] };
    assert.equal(list.data.length, 2 * PAIRS);
    const seeds = new Map<number, number[]>();
    for (const e of list.data) seeds.set(e.replay_spec.layout_seed, [...(seeds.get(e.replay_spec.layout_seed) ?? []), e.unit]);
    assert.equal(seeds.size, PAIRS);
    for (const units of seeds.values()) assert.deepEqual([...units].sort(), [0, 1]);

    // Blocking by cell: both episodes of every pair ran on one cell, and the model-level claim agrees
    // with an independent computation from the episodes themselves.
    const bySeed = new Map<number, any[]>();
    for (const e of list.data) bySeed.set(e.replay_spec.layout_seed, [...(bySeed.get(e.replay_spec.layout_seed) ?? []), e]);
    const pairs = [...bySeed.values()].map((two) => {
      assert.equal(two[0].cell, two[1].cell, `pair with layout seed ${two[0].replay_spec.layout_seed} ran on ${two[0].cell} and ${two[1].cell}`);
      const ok = (unit: number) => { const e = two.find((x) => x.unit === unit); return e.outcome === "success" && !e.intervened; };
      return { cell: two[0].cell as string, a: ok(0), b: ok(1) };
    });
    assert.equal(c.split_pairs, 0);
    assert.deepEqual(c.by_cell.map((x: any) => x.cell), [...new Set(pairs.map((p) => p.cell))].sort());
    assert.equal(c.by_cell.reduce((sum: number, x: any) => sum + x.pairs, 0), PAIRS);
    const reference = pairedCellReference(pairs);
    assert.ok(Math.abs(c.ci[0] - reference.ci[0]) < 0.005 && Math.abs(c.ci[1] - reference.ci[1]) < 0.005, `${JSON.stringify(c.ci)} vs ${JSON.stringify(reference.ci)}`);
    assert.ok(Math.abs(c.probability_a_greater - reference.probabilityAGreater) < 0.005);

    // The report: JSON with per-unit citations, and a real PDF.
    const report = (await (await service.api(`/v1/runs/${run.id}/report`)).json()) as Record<string, any>;
    assert.equal(report.object, "report");
    assert.equal(report.kind, "verification");
    assert.equal(report.run_kind, "compare");
    assert.equal(report.units.length, 2);
    // The citations are the ones a paper prints (docs/papers.md): the run's kind in words, its policies, the pins, each rate with n and interval.
    const rate = String.raw`\d+\.\d% \[\d+\.\d%, \d+\.\d%\] \(n = ${PAIRS}\)`;
    const pins = String.raw`task pick-cube@v1 \(frozen revision\); robot so101@3\.11; environment tabletop@1`;
    assert.match(report.citation, new RegExp(`^Assay comparison ${run.id} \\(\\d{4}-\\d{2}-\\d{2}\\): expert vs novice; ${pins}; expert ${rate}; novice ${rate}; 95% intervals, beta-binomial posterior over cells\\.$`));
    assert.match(report.units[0].citation, new RegExp(`^Assay comparison ${run.id} \\(\\d{4}-\\d{2}-\\d{2}\\): expert; ${pins}; success ${rate}; 95% intervals, beta-binomial posterior over cells\\.$`));
    assert.match(report.units[1].citation, new RegExp(`^Assay comparison ${run.id} \\(\\d{4}-\\d{2}-\\d{2}\\): novice; ${pins}; success ${rate}; `));
    // No API jargon: no unit keys, no "run run_".
    for (const citation of [report.citation, ...report.units.map((u: any) => u.citation)]) assert.doesNotMatch(citation, /policy:|run run_|\[policy/);
    assert.equal(report.perturbation_schedule.realized.length, 2 * PAIRS);
    assert.ok(report.out_of_scope.length > 0, "the task's out_of_scope declarations appear verbatim");
    const pdf = await service.api(report.pdf_url);
    assert.equal(pdf.status, 200);
    assert.match(pdf.headers.get("content-type") ?? "", /application\/pdf/);
    const bytes = Buffer.from(await pdf.arrayBuffer());
    assert.equal(bytes.subarray(0, 5).toString(), "%PDF-");
  });

  it("stops early once the sequential test decides, cancelling what is pending", async () => {
    const created = await service.api("/v1/runs", {
      method: "POST",
      json: {
        ...COMPARE, episodes: 40, sequential: { alpha: 0.2, beta: 0.2, delta: 0.45 },
        perturbation: { layout_jitter_mm: 10, lighting: ["nominal", "dim", "bright", "warm"], distractors: "color-blocks@1", seed: 77 },
      },
    });
    assert.equal(created.status, 201, await created.clone().text());
    const run = (await created.json()) as Record<string, any>;
    // The submission answers with the test's exact power at its cap of 40 pairs, per discordant share.
    const power = run.sequential_power;
    assert.equal(power.max_pairs, 40);
    assert.deepEqual(power.by_discordant_share.map((r: any) => r.discordant_share), [0.1, 0.2, 0.3, 0.5]);
    const expected = { alpha: 0.2, beta: 0.2, delta: 0.45, maxPairs: 40 };
    for (const row of power.by_discordant_share) {
      assert.equal(row.power, sequentialCompareOperatingCharacteristics(expected, row.discordant_share, 0.95).a_better);
      assert.equal(row.pairs_for_power, pairsForPower({ alpha: 0.2, beta: 0.2, delta: 0.45 }, row.discordant_share));
    }
    assert.ok(power.by_discordant_share[0].power < power.by_discordant_share[3].power, "more discordant pairs, more power");

    const done = (await runEnd(service, run.id)).run;
    assert.equal(done.status, "completed");
    const seq = done.result.comparison.sequential;
    assert.notEqual(seq.decision, "continue", JSON.stringify(done.result.comparison));
    assert.equal(done.result.stopped_early, true, JSON.stringify(done.result.comparison));
    const ran = done.result.units[0].result.n + done.result.units[1].result.n;
    assert.ok(ran < 80, `${ran} episodes ran of 80`);
    assert.ok(seq.pairs_used <= done.result.comparison.pairs);
    // After the early stop the anytime-valid interval stands beside the fixed-n one, each labelled.
    const c = done.result.comparison;
    assert.match(c.ci_validity, /^fixed-n/);
    assert.equal(c.ci_anytime.interval_method, "discordant-product-cs");
    assert.match(c.ci_anytime.validity, /^anytime-valid/);
    assert.deepEqual(c.ci_anytime.ci, differenceConfidenceSequence({ both: c.both, onlyA: c.only_a, onlyB: c.only_b, neither: c.neither }, 0.05).ci);
  });

  it("validates compare's own fields with 422s naming the field", async () => {
    const missing = await service.api("/v1/runs", { method: "POST", json: { ...COMPARE, policies: undefined } });
    assert.equal(missing.status, 422);
    assert.match(((await missing.json()) as any).error.message, /requires policies/);
    const three = await service.api("/v1/runs", { method: "POST", json: { ...COMPARE, policies: { ...COMPARE.policies, third: policy("assay/ref-policy:expert") } } });
    assert.equal(three.status, 422);
    assert.match(((await three.json()) as any).error.message, /exactly two/);
    const badDim = await service.api("/v1/runs", { method: "POST", json: { ...COMPARE, policies: { ...COMPARE.policies, novice: { ...policy("assay/ref-policy:novice"), action_space: { type: "joint_position", dim: 7 } } } } });
    assert.equal(badDim.status, 422);
    assert.match(((await badDim.json()) as any).error.message, /policies\.novice: .*dim/);
  });
});
