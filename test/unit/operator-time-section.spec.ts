/**
 * The report's operator_time (coordinator/reports/operator-time-section.ts over coordinator/runs/operator-time.ts):
 * resets, labels and interventions a person performed, totals, means, per counted episode; the Result's operator_time
 * from the same figures.
 */
import assert from "node:assert/strict";
import { operatorTimeSection, operatorTimeText } from "../../coordinator/reports/operator-time-section.js";
import type { Report } from "../../coordinator/reports/report.js";
import { renderReportPdf } from "../../coordinator/reports/report-pdf.js";
import { operatorSections } from "../../coordinator/runs/operator-time.js";
import { pdfDrawnText } from "../support/pdf-drawn-text.js";
import type { EpisodeRecord } from "../../coordinator/store/episodes-repo.js";

const episode = (e: Partial<EpisodeRecord>): EpisodeRecord => ({ status: "done", operatorResetS: null, label: null, interruptions: [], ...e }) as EpisodeRecord;

describe("report operator_time", () => {
  it("is absent when no person set a scene or judged an episode", () => {
    assert.equal(operatorTimeSection([episode({}), episode({ status: "pending" })]), undefined);
  });

  it("counts every reset a person set (interrupted attempts too) and every label asked for, per counted episode", () => {
    const section = operatorTimeSection([
      episode({ operatorResetS: 30, label: { judgedBy: "human", progress: 80, note: null, waitedS: 10 } }),
      episode({ operatorResetS: 50, interruptions: [{ operator_reset_s: 40 } as EpisodeRecord["interruptions"][number]], label: { judgedBy: "human", progress: 20, note: null, waitedS: 20 } }),
      // Unlabelled: the person was asked and never answered; the cell's wait counts, the episode is not in n.
      episode({ status: "unlabelled", operatorResetS: 20, label: { judgedBy: null, progress: null, note: null, waitedS: 600 } }),
    ]);
    assert.deepEqual(section, {
      episodes: 2,
      reset: { count: 4, s_total: 140, s_mean: 35, s_per_episode: 70 },
      label: { count: 3, s_total: 630, s_mean: 210, s_per_episode: 315 },
      intervention: { count: 0, s_total: 0, s_mean: 0, s_per_episode: 0 },
      s_total: 770,
      s_per_episode: 385,
    });
    assert.deepEqual(operatorTimeText(section!), [
      "Resets set by a person: 4, 140 s in all, 35 s each on average, 70 s per counted episode.",
      "Episodes judged by a person: 3, 630 s in all, 210 s each on average, 315 s per counted episode.",
      "Interventions a person performed (from the offer to Done): none.",
      "Together: 770 s of a person's time, 385 s per episode counted in n (2).",
    ]);
  });

  /** A person's help as the cell records it in the end /meta (cell-agent/episode/operator-intervention.ts). */
  const byPerson = (kind: string, waitedS: number, startedAt: string, heldS: number, extra: Record<string, unknown> = {}) => ({
    t_s: 6, kind, detail: "a person helped at the operator station", duration_s: heldS + 3, by: "operator", offered_t_s: 5, end_t_s: 6 + heldS + 3,
    waited_s: waitedS, started_at: startedAt, ended_at: new Date(Date.parse(startedAt) + heldS * 1000).toISOString(), ...extra,
  });
  /** The simulator's own nudge: no person (no `by`). */
  const nudge = { t_s: 4, kind: "scripted", detail: "re-homed the arm; the task objects were where planned", duration_s: 3 };

  it("counts a person's interventions from the offer to Done (the walk included), not the simulator's nudges nor an offer nobody took", () => {
    const section = operatorTimeSection([
      // on_stall, taken: 12 s to walk over and press Intervene, 18 s from Intervene to Done: 30 s of the person's.
      episode({ meta: { interventions_mode: "on_stall", interventions: [byPerson("on_stall", 12, "2026-11-01T10:00:00.000Z", 18)] } }),
      // scripted by the person (5 + 5 s) beside a scripted nudge of the simulator's own hands (no person: nothing).
      episode({ meta: { interventions_mode: "scripted", interventions: [nudge, byPerson("scripted", 5, "2026-11-01T10:05:00.000Z", 5)] } }),
      // Offered and not taken: the lapsed offer is only an event; the /meta lists no intervention. No person time.
      episode({ meta: { interventions_mode: "on_stall", interventions: [] } }),
      // An episode still running has no end /meta that counts.
      episode({ status: "running", meta: { interventions: [byPerson("on_stall", 100, "2026-11-01T10:09:00.000Z", 100)] } }),
    ]);
    assert.deepEqual(section, {
      episodes: 3,
      reset: { count: 0, s_total: 0, s_mean: 0, s_per_episode: 0 },
      label: { count: 0, s_total: 0, s_mean: 0, s_per_episode: 0 },
      intervention: { count: 2, s_total: 40, s_mean: 20, s_per_episode: 13.3 },
      s_total: 40,
      s_per_episode: 13.3,
    }, "present though no reset or label needed a person");
    assert.deepEqual(operatorTimeText(section!), [
      "Resets set by a person: none waited for a person.",
      "Episodes judged by a person: none waited for a person.",
      "Interventions a person performed (from the offer to Done): 2, 40 s in all, 20 s each on average, 13.3 s per counted episode.",
      "Together: 40 s of a person's time, 13.3 s per episode counted in n (3).",
    ]);
  });

  it("is absent when the only interventions were offers nobody took and the simulator's nudges", () => {
    assert.equal(operatorTimeSection([episode({ meta: { interventions: [nudge] } }), episode({ meta: { interventions: [] } })]), undefined);
  });

  it("falls back to the episode's seconds (duration_s) when a person's intervention lacks its wall times", () => {
    const help = byPerson("on_stall", 4, "2026-11-01T10:00:00.000Z", 6, { started_at: undefined, ended_at: "not a time" });
    assert.deepEqual(operatorTimeSection([episode({ meta: { interventions: [help] } })])!.intervention, { count: 1, s_total: 13, s_mean: 13, s_per_episode: 13 });
  });

  it("adds resets, labels and interventions together; the Result's operator_time keeps its reset-only shape from the same figures", () => {
    const episodes = [
      episode({ operatorResetS: 30, label: { judgedBy: "human", progress: 80, note: null, waitedS: 10 }, meta: { interventions: [byPerson("on_stall", 12, "2026-11-01T10:00:00.000Z", 18)] } }),
      episode({ operatorResetS: 20 }),
    ];
    const section = operatorTimeSection(episodes)!;
    assert.deepEqual(section.intervention, { count: 1, s_total: 30, s_mean: 30, s_per_episode: 15 });
    assert.equal(section.s_total, 30 + 20 + 10 + 30);
    assert.equal(section.s_per_episode, 45);
    assert.deepEqual(operatorSections(episodes).operator_time, {
      resets: section.reset.count, reset_s_total: section.reset.s_total, reset_s_mean: section.reset.s_mean, reset_s_per_episode: section.reset.s_per_episode,
    });
    assert.deepEqual(operatorSections(episodes).operator_time, { resets: 2, reset_s_total: 50, reset_s_mean: 25, reset_s_per_episode: 25 });
  });

  it("the PDF's Operator time section prints the interventions a person performed beside resets and labels", async () => {
    const section = operatorTimeSection([
      episode({ operatorResetS: 30, meta: { interventions: [byPerson("on_stall", 12, "2026-11-01T10:00:00.000Z", 18)] } }),
    ])!;
    const rate = { n: 1, success_rate: 0, ci95: [0, 0.79] as [number, number], interval_method: "wilson" };
    const report = {
      object: "report", run_id: "run_Op1", kind: "verification", run_kind: "run", result: rate,
      resolved_pins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
      citation: "Assay run run_Op1", pdf_url: "http://127.0.0.1/v1/runs/run_Op1/report?format=pdf", generated: "2026-11-28T00:00:00.000Z",
      failure_clusters: {}, perturbation_schedule: { perturbation_rev: "assay-perturb@1", requested: {}, summary: { lighting: {}, distractors: {} }, realized: [] },
      stages: {}, instructions: { mode: "sampled", sampled: { ...rate, by_instruction: {} }, held_out: { ...rate, n: 0, by_instruction: {} } },
      out_of_scope: [], units: [],
      interventions: { mode: "on_stall", episodes_intervened: 1, count: 1, assisted_successes: 0, events: [{ episode: "ep_1", index: 0, t_s: 6, kind: "on_stall", by: "operator" }], unassisted: rate, assisted: rate },
      cells: { by_cell: [], clusters: 0, design_effect: 1, effective_n: 1, ci95_these_cells: [0, 0.79] },
      operator_time: section,
      cost: { robot_hours: 0.1, environment_hours: 0.1, cost_usd: 1.5 },
    } as unknown as Report;
    const text = pdfDrawnText(await renderReportPdf(report, new Date("2026-11-28T00:00:00.000Z"))).replace(/\s+/g, " ");
    const at = text.indexOf("Operator time");
    assert.ok(at > 0, text.slice(0, 800));
    for (const sentence of [
      "Resets set by a person: 1, 30 s in all, 30 s each on average, 30 s per counted episode.",
      "Interventions a person performed (from the offer to Done): 1, 30 s in all, 30 s each on average, 30 s per counted episode.",
      "Together: 60 s of a person's time, 60 s per episode counted in n (1).",
    ]) assert.ok(text.indexOf(sentence) > at, `missing after "Operator time": ${sentence}`);
  });
});
