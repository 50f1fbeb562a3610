/**
 * The verification report of a completed run (GET /v1/runs/{id}/report): the spec's Report fields
 * (object, run_id, kind "verification", result, resolved_pins, citation, pdf_url) plus what the
 * spec says a report carries with names it leaves open:
 *
 * - `failure_clusters`: cluster name -> count (as in the Result);
 * - `perturbation_schedule`: the schedule as requested and as realized, one entry per finished
 *   episode, read from the episode's `/meta` (`perturbations_realized`) or its replay spec;
 * - `stages`: per-stage rates; `instructions`: per-instruction rates, with held-out paraphrases in
 *   their own section (empty unless a held-out instruction actually ran, e.g. a verify replay);
 * - `out_of_scope`: the task envelope's declarations, verbatim;
 * - `units`: for multi-unit kinds, each unit's rate and its own citation.
 *
 * Pilot runs never get a report (their episodes are calibration only).
 */
import { AssayError } from "../errors/assay-error.js";
import { rateSummary, stageRates, type RateSummary } from "../runs/run-results.js";
import type { Db } from "../store/database.js";
import type { RunRow } from "../store/runs-repo.js";
import { isPilotRun } from "../tasks/pilot.js";
import { listUnitEpisodes, parseAssign, parseUnits, type UnitEpisodeRow } from "../kinds/units.js";

export interface ReportUnit {
  key: string;
  robot: string;
  environment: string;
  task: string;
  policy_name?: string;
  role?: string;
  result: RateSummary;
  citation: string;
}

export interface Report {
  object: "report";
  run_id: string;
  kind: "verification";
  run_kind: string;
  result: RateSummary;
  resolved_pins: Record<string, unknown>;
  citation: string;
  pdf_url: string;
  generated: string;
  failure_clusters: Record<string, number>;
  perturbation_schedule: {
    perturbation_rev: string;
    requested: unknown;
    summary: { lighting: Record<string, number>; distractors: Record<string, number> };
    realized: Array<Record<string, unknown>>;
  };
  stages: Record<string, RateSummary>;
  instructions: { sampled: Array<{ instruction: string } & RateSummary>; held_out: Array<{ instruction: string } & RateSummary> };
  out_of_scope: string[];
  units: ReportUnit[];
  interventions: {
    mode: string;
    episodes_intervened: number;
    count: number;
    events: Array<{ index: number; unit?: number; t_s: number | null; kind: string }>;
    result_without_intervened: RateSummary;
    result_intervened: RateSummary;
  };
  cost: { robot_hours: number; environment_hours: number; cost_usd: number };
}

const fixed2 = (x: number) => x.toFixed(2);

/**
 * `Assay run run_X (2026-11-22): pick-cube@v1 on so101@3.11 in tabletop@1, n=20, success 0.85
 * [0.64, 0.95] (Wilson 95%).`
 */
export function citationOf(runId: string, completed: string, pins: { task: string; robot: string; environment: string }, rate: RateSummary, label?: string): string {
  const date = completed.slice(0, 10);
  return `Assay run ${runId}${label ? ` [${label}]` : ""} (${date}): ${pins.task} on ${pins.robot} in ${pins.environment}, n=${rate.n}, `
    + `success ${fixed2(rate.success_rate)} [${fixed2(rate.ci95[0])}, ${fixed2(rate.ci95[1])}] (Wilson 95%).`;
}

function taskSpecOf(db: Db, taskPin: string): { envelope?: { out_of_scope?: unknown }; instructions?: { held_out?: unknown } } | undefined {
  const match = /^(.+)@v(\d+)$/.exec(taskPin);
  const row = match
    ? (db.prepare("SELECT spec FROM tasks WHERE name = ? AND version = ?").get(match[1], Number(match[2])) as { spec: string } | undefined)
    : (db.prepare("SELECT spec FROM tasks WHERE id = ?").get(taskPin) as { spec: string } | undefined);
  return row ? JSON.parse(row.spec) : undefined;
}

function parseJson(text: string | null): Record<string, unknown> | undefined {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** One realized schedule entry: /meta's `perturbations_realized` when present, else the replay spec. */
function realizedOf(e: UnitEpisodeRow): Record<string, unknown> {
  const meta = parseJson(e.meta)?.perturbations_realized as Record<string, unknown> | undefined;
  const replay = parseJson(e.replay_spec) ?? {};
  const objects = (meta?.objects ?? {}) as Record<string, { offset_mm?: [number, number] }>;
  const distractors = (meta?.distractors ?? replay.distractor_objects ?? []) as Array<{ object: string }>;
  return {
    index: e.idx,
    ...(e.unit !== null ? { unit: e.unit } : {}),
    outcome: e.outcome,
    layout_seed: meta?.layout_seed ?? replay.layout_seed ?? null,
    layout_jitter_mm: meta?.layout_jitter_mm ?? null,
    lighting: meta?.lighting ?? replay.lighting ?? null,
    distractor_set: meta?.distractor_set ?? replay.distractors ?? null,
    distractors: distractors.map((d) => d.object),
    object_offsets_mm: Object.fromEntries(Object.entries(objects).map(([name, o]) => [name, o.offset_mm ?? null])),
    instruction: meta?.instruction ?? replay.instruction ?? null,
    replayed: meta?.replayed ?? Boolean(parseAssign(e.assign).replay_spec),
  };
}

/**
 * Interventions recorded in an episode's /meta (`interventions: [{t_s, kind, detail?}]`), the
 * channel a cell uses to say a technician (or a scripted nudge) touched the scene.
 */
function interventionsOf(e: UnitEpisodeRow): Array<{ t_s: number | null; kind: string }> {
  const list = parseJson(e.meta)?.interventions;
  if (!Array.isArray(list)) return [];
  return list.map((x: { t_s?: unknown; kind?: unknown }) => ({ t_s: typeof x?.t_s === "number" ? x.t_s : null, kind: typeof x?.kind === "string" ? x.kind : "unspecified" }));
}

function interventionSection(mode: string, done: readonly UnitEpisodeRow[]): Report["interventions"] {
  const events = done.flatMap((e) => interventionsOf(e).map((i) => ({ index: e.idx, ...(e.unit !== null ? { unit: e.unit } : {}), ...i })));
  const flagged = new Set(events.map((e) => e.index));
  const rate = (list: readonly UnitEpisodeRow[]) => rateSummary(list.filter((e) => e.outcome === "success").length, list.length);
  return {
    mode,
    episodes_intervened: flagged.size,
    count: events.length,
    events,
    result_without_intervened: rate(done.filter((e) => !flagged.has(e.idx))),
    result_intervened: rate(done.filter((e) => flagged.has(e.idx))),
  };
}

function tally(values: Array<string | null>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) if (v !== null) out[v] = (out[v] ?? 0) + 1;
  return out;
}

function instructionRates(done: readonly UnitEpisodeRow[], realized: ReadonlyArray<Record<string, unknown>>, heldOut: readonly string[]) {
  const byInstruction = new Map<string, { k: number; n: number }>();
  done.forEach((e, i) => {
    const instruction = realized[i].instruction;
    if (typeof instruction !== "string") return;
    const t = byInstruction.get(instruction) ?? { k: 0, n: 0 };
    t.n += 1;
    if (e.outcome === "success") t.k += 1;
    byInstruction.set(instruction, t);
  });
  const rows = [...byInstruction].map(([instruction, t]) => ({ instruction, ...rateSummary(t.k, t.n) }));
  return { sampled: rows.filter((r) => !heldOut.includes(r.instruction)), held_out: rows.filter((r) => heldOut.includes(r.instruction)) };
}

/**
 * Builds the report of `run`; throws 404 not_found for a pilot or a run that has not completed.
 * `baseUrl` is the public base of /v1 (for pdf_url).
 */
export function buildReport(db: Db, run: RunRow, baseUrl: string, now: Date): Report {
  if (isPilotRun(run.plan)) {
    throw new AssayError("not_found", `run ${run.id} is a task pilot: pilot episodes are calibration only and never appear in a verification report`, { runId: run.id });
  }
  if (run.status !== "completed" || !run.result || !run.completed) {
    throw new AssayError("not_found", `run ${run.id} is ${run.status}; a report exists once the run has completed (a stopped run's partial result is at GET /v1/runs/${run.id}/result)`, { runId: run.id });
  }
  const result = JSON.parse(run.result) as Record<string, any>;
  const pins = JSON.parse(run.resolved_pins) as Record<string, string>;
  const request = JSON.parse(run.request) as Record<string, unknown>;
  const episodes = listUnitEpisodes(db, run.id);
  const done = episodes.filter((e) => e.status === "done");
  const realized = done.map(realizedOf);
  const units = (result.units ?? []) as Array<Record<string, any>>;
  const taskPins = units.length ? [...new Set(units.map((u) => u.task as string))] : [pins.task];
  const specs = taskPins.map((t) => taskSpecOf(db, t));
  const outOfScope = [...new Set(specs.flatMap((s) => (Array.isArray(s?.envelope?.out_of_scope) ? (s!.envelope!.out_of_scope as string[]) : [])))];
  const heldOut = specs.flatMap((s) => (Array.isArray(s?.instructions?.held_out) ? (s!.instructions!.held_out as string[]) : []));
  const headline: RateSummary = { n: result.n, success_rate: result.success_rate, ci95: result.ci95, interval_method: result.interval_method };
  // Eval units carry their suite's schedules; other runs use the submitted perturbation.
  const unitSchedules = parseUnits(run.units).filter((u) => u.perturbation).map((u) => ({ unit: u.key, ...u.perturbation }));
  const requested = unitSchedules.length ? unitSchedules : (request.perturbation ?? null);

  return {
    object: "report",
    run_id: run.id,
    kind: "verification",
    run_kind: run.kind,
    result: headline,
    resolved_pins: pins,
    citation: units.length > 1
      ? `Assay run ${run.id} (${run.completed.slice(0, 10)}): ${run.kind} of ${taskPins.join(", ")} over ${units.length} units, n=${headline.n}; per-unit figures in units[].`
      : citationOf(run.id, run.completed, (units[0] ?? pins) as { task: string; robot: string; environment: string }, headline),
    pdf_url: `${baseUrl}/v1/runs/${run.id}/report?format=pdf`,
    generated: now.toISOString(),
    failure_clusters: result.failure_clusters ?? {},
    perturbation_schedule: {
      perturbation_rev: pins.perturbation_rev,
      requested,
      summary: {
        lighting: tally(realized.map((r) => (typeof r.lighting === "string" ? r.lighting : null))),
        distractors: tally(realized.map((r) => (typeof r.distractor_set === "string" ? r.distractor_set : null))),
      },
      realized,
    },
    stages: (result.stages as Record<string, RateSummary> | undefined) ?? stageRates(done),
    instructions: instructionRates(done, realized, heldOut),
    out_of_scope: outOfScope,
    units: units.map((u) => {
      const rate: RateSummary = { n: u.result.n, success_rate: u.result.success_rate, ci95: u.result.ci95, interval_method: u.result.interval_method };
      return {
        key: u.key, robot: u.robot, environment: u.environment, task: u.task,
        ...(u.policy_name !== undefined ? { policy_name: u.policy_name } : {}),
        ...(u.role !== undefined ? { role: u.role } : {}),
        result: rate,
        citation: citationOf(run.id, run.completed!, u as { task: string; robot: string; environment: string }, rate, u.key),
      };
    }),
    interventions: interventionSection(typeof request.interventions === "string" ? request.interventions : "none", done),
    cost: { robot_hours: result.robot_hours, environment_hours: result.environment_hours, cost_usd: result.cost_usd },
  };
}
