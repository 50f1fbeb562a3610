/**
 * The verification report of a completed run (GET /v1/runs/{id}/report): the spec's Report fields
 * (object, run_id, kind "verification", result, resolved_pins, citation, pdf_url) plus what the
 * spec says a report carries with names it leaves open:
 *
 * - `failure_clusters`: cluster name -> count (as in the Result);
 * - `perturbation_schedule`: the schedule as requested and as realized, one entry per finished
 *   episode, read from the episode's `/meta` (`perturbations_realized`) or its replay spec;
 * - `stages`: per-stage rates; `instructions`: the run's instruction set (`mode`) and one section per
 *   instruction set, `sampled` and `held_out`, each with its pooled rate and interval and the rate
 *   of every instruction (`by_instruction`); held-out rates are never pooled with sampled ones;
 * - `out_of_scope`: the task envelope's declarations, verbatim;
 * - `units`: for multi-unit kinds, each unit's rate and its own citation.
 * - `interventions`: the run's declared mode, each intervention's episode and time, and the rate
 *   over episodes without an intervention apart from the rate over those with one.
 * - `operator_time` (when a person set a scene, judged an episode or performed an intervention): reset,
 *   labelling and intervention seconds, total and mean, per counted episode
 *   (coordinator/reports/operator-time-section.ts).
 *
 * Pilot runs never get a report (their episodes are calibration only).
 */
import { nextTurn } from "../async/next-turn.js";
import { AssayError } from "../errors/assay-error.js";
import { interventionModeOf, interventionSummary } from "../runs/interventions.js";
import { policySucceeded } from "../runs/policy-outcome.js";
import { instructionSetOf, type InstructionSet } from "../runs/instruction-set.js";
import { rateSummary, stageRates, type CellBreakdown, type RateSummary } from "../runs/result-summary.js";
import type { Db } from "../store/database.js";
import { findPinnedTask } from "../store/tasks-repo.js";
import type { RunRecord } from "../store/runs-repo.js";
import { isPilotRun } from "../tasks/pilot.js";
import { paperRowsOfRun, paperRowsOfUnits, runNameOf } from "./paper-rows.js";
import { citationText } from "./paper-words.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import { readEpisodeRecords } from "../runs/episode-records.js";
import { operatorTimeSection, type OperatorTimeSection } from "./operator-time-section.js";
import type { CompareHeadline } from "../runs/compare-headline.js";
import { kindModule } from "../kinds/registry.js";

/** One instruction set's episodes: pooled rate and interval, and the rate of each instruction. */
export interface InstructionSetRates extends RateSummary {
  by_instruction: Record<string, RateSummary>;
}

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
  instructions: { mode: InstructionSet; sampled: InstructionSetRates; held_out: InstructionSetRates };
  out_of_scope: string[];
  units: ReportUnit[];
  interventions: {
    mode: string;
    episodes_intervened: number;
    count: number;
    assisted_successes: number;
    events: Array<{ episode: string; index: number; unit?: number; t_s: number | null; kind: string; by?: string }>;
    /** The headline: an intervened episode is a failure of the policy. */
    unassisted: RateSummary;
    /** The same episodes with the successes a human helped counted as successes. */
    assisted: RateSummary;
  };
  cells: CellBreakdown;
  /** A person's time on the run's resets, labels and interventions; absent when no person was involved. */
  operator_time?: OperatorTimeSection;
  /** Kinds compare and transfer: the comparison's answer up front (the Result's headline). */
  comparison?: CompareHeadline;
  cost: { robot_hours: number; environment_hours: number; cost_usd: number };
}

/**
 * The report's one-line citation, the one the PDF and the paper files print (paper-words.ts): the run's
 * name or policies, the frozen task revision, robot and environment pins, every figure with its n and
 * 95% interval, and the interval's method by name:
 *
 *     Assay evaluation run_X (2026-11-22): expert; task pick-cube@v1 (frozen revision); robot
 *     so101@3.11; environment tabletop@1; success 100.0% [83.9%, 100.0%] (n = 20); 95% intervals,
 *     beta-binomial posterior over cells.
 */
function citationOfRun(run: RunRecord): string {
  return citationText({ run, name: runNameOf(run), rows: paperRowsOfRun(run) });
}

/** Each unit's citation: the same line for the unit's row alone, its subject the unit's label when the units differ. */
function unitCitations(run: RunRecord): string[] {
  const rows = paperRowsOfUnits(run);
  const runName = runNameOf(run);
  return rows.map((row) => {
    const subject = rows.length > 1 ? (runName ? `${runName}: ${row.label}` : row.label) : runName;
    return citationText({ run, name: subject, rows: [row] });
  });
}

async function taskSpecOf(db: Db, taskPin: string): Promise<{ envelope?: { out_of_scope?: unknown }; instructions?: { held_out?: unknown } } | undefined> {
  return (await findPinnedTask(db, taskPin))?.spec;
}

/** One realized schedule entry: /meta's `perturbations_realized` when present, else the replay spec. */
function realizedOf(e: EpisodeRecord): Record<string, unknown> {
  const meta = e.meta?.perturbations_realized as Record<string, unknown> | undefined;
  const replay = e.replaySpec ?? {};
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
    instruction_set: meta?.instruction_set ?? replay.instruction_set ?? null,
    replayed: meta?.replayed ?? Boolean(e.assign.replay_spec),
  };
}

/**
 * The interventions section: the Result's summary (coordinator/runs/interventions.ts) under the
 * report's names, `events` being the Result's `timestamps`, with the headline rate beside the
 * rate that counts assisted successes.
 */
function interventionSection(mode: string, done: readonly EpisodeRecord[], withUnits: boolean, headline: RateSummary, assisted: RateSummary | undefined): Report["interventions"] {
  const summary = interventionSummary(mode, done, withUnits);
  return {
    mode,
    episodes_intervened: summary.episodes_intervened,
    count: summary.count,
    assisted_successes: summary.assisted_successes,
    events: summary.timestamps,
    unassisted: headline,
    assisted: assisted ?? headline,
  };
}

function tally(values: Array<string | null>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) if (v !== null) out[v] = (out[v] ?? 0) + 1;
  return out;
}

/**
 * Rates per instruction set. An episode belongs to the set its /meta (or replay spec) records as
 * `instruction_set`; older episodes that record none are placed by the task's held-out list.
 * Episodes that carried no instruction count in neither set.
 */
function instructionRates(
  mode: InstructionSet, done: readonly EpisodeRecord[], realized: ReadonlyArray<Record<string, unknown>>, heldOut: readonly string[],
): Report["instructions"] {
  const sets: Record<InstructionSet, Map<string, { k: number; n: number }>> = { sampled: new Map(), held_out: new Map() };
  done.forEach((e, i) => {
    const { instruction, instruction_set: recorded } = realized[i];
    if (typeof instruction !== "string") return;
    const set: InstructionSet = recorded === "held_out" || recorded === "sampled" ? recorded : heldOut.includes(instruction) ? "held_out" : "sampled";
    const t = sets[set].get(instruction) ?? { k: 0, n: 0 };
    t.n += 1;
    if (policySucceeded(e)) t.k += 1;
    sets[set].set(instruction, t);
  });
  const section = (tallies: Map<string, { k: number; n: number }>): InstructionSetRates => {
    const all = [...tallies.values()];
    return {
      ...rateSummary(all.reduce((s, t) => s + t.k, 0), all.reduce((s, t) => s + t.n, 0)),
      by_instruction: Object.fromEntries([...tallies].map(([instruction, t]) => [instruction, rateSummary(t.k, t.n)])),
    };
  };
  return { mode, sampled: section(sets.sampled), held_out: section(sets.held_out) };
}

/**
 * Builds the report of `run`; throws 404 not_found for a pilot or a run that has not completed.
 * `baseUrl` is the public base of /v1 (for pdf_url).
 */
export async function buildReport(db: Db, run: RunRecord, baseUrl: string, now: Date): Promise<Report> {
  if (isPilotRun(run.plan)) {
    throw new AssayError("not_found", `run ${run.id} is a task pilot: pilot episodes are calibration only and never appear in a verification report`, { runId: run.id });
  }
  if (run.status !== "completed" || !run.result || !run.completed) {
    throw new AssayError("not_found", `run ${run.id} is ${run.status}; a report exists once the run has completed (a stopped run's partial result is at GET /v1/runs/${run.id}/result)`, { runId: run.id });
  }
  const result = run.result as Record<string, any>;
  const pins = run.resolvedPins;
  const request = run.request;
  const episodes = await readEpisodeRecords(db, run.id);
  const done = episodes.filter((e) => e.status === "done");
  const realized = done.map(realizedOf);
  await nextTurn();
  const units = (result.units ?? []) as Array<Record<string, any>>;
  const taskPins = units.length ? [...new Set(units.map((u) => u.task as string))] : [pins.task];
  const specs: Array<Awaited<ReturnType<typeof taskSpecOf>>> = [];
  for (const t of taskPins) specs.push(await taskSpecOf(db, t));
  const outOfScope = [...new Set(specs.flatMap((s) => (Array.isArray(s?.envelope?.out_of_scope) ? (s!.envelope!.out_of_scope as string[]) : [])))];
  const heldOut = specs.flatMap((s) => (Array.isArray(s?.instructions?.held_out) ? (s!.instructions!.held_out as string[]) : []));
  const headline: RateSummary = { n: result.n, success_rate: result.success_rate, ci95: result.ci95, interval_method: result.interval_method };
  // Eval units carry their suite's schedules; other runs use the submitted perturbation.
  const unitSchedules = run.units.filter((u) => u.perturbation).map((u) => ({ unit: u.key, ...u.perturbation }));
  const requested = unitSchedules.length ? unitSchedules : (request.perturbation ?? null);
  // Each section is a pass over the run's episodes: a turn of the event loop between them, so that a 10,000-episode
  // run's report holds the loop for one section at a time (15-20 ms each on a cold process), not for all of them.
  const summary = {
    lighting: tally(realized.map((r) => (typeof r.lighting === "string" ? r.lighting : null))),
    distractors: tally(realized.map((r) => (typeof r.distractor_set === "string" ? r.distractor_set : null))),
  };
  await nextTurn();
  const stages = (result.stages as Record<string, RateSummary> | undefined) ?? stageRates(done);
  await nextTurn();
  const instructions = instructionRates(instructionSetOf(request), done, realized, heldOut);
  await nextTurn();
  const interventions = interventionSection(interventionModeOf(request), done, kindModule(run.kind).traits.hasUnits, headline, result.assisted);
  await nextTurn();
  const operatorTime = operatorTimeSection(episodes);
  const citations = unitCitations(run);

  return {
    object: "report",
    run_id: run.id,
    kind: "verification",
    run_kind: run.kind,
    result: headline,
    resolved_pins: { ...pins },
    citation: citationOfRun(run),
    pdf_url: `${baseUrl}/v1/runs/${run.id}/report?format=pdf`,
    generated: now.toISOString(),
    failure_clusters: result.failure_clusters ?? {},
    perturbation_schedule: {
      perturbation_rev: pins.perturbation_rev,
      requested,
      summary,
      realized,
    },
    stages,
    instructions,
    out_of_scope: outOfScope,
    units: units.map((u, i) => {
      const rate: RateSummary = { n: u.result.n, success_rate: u.result.success_rate, ci95: u.result.ci95, interval_method: u.result.interval_method };
      return {
        key: u.key, robot: u.robot, environment: u.environment, task: u.task,
        ...(u.policy_name !== undefined ? { policy_name: u.policy_name } : {}),
        ...(u.role !== undefined ? { role: u.role } : {}),
        result: rate,
        citation: citations[i]!,
      };
    }),
    interventions,
    cells: result.cells ?? { by_cell: [], clusters: 0, design_effect: 1, effective_n: headline.n, ci95_these_cells: headline.ci95 },
    ...(operatorTime ? { operator_time: operatorTime } : {}),
    ...(result.headline ? { comparison: result.headline as CompareHeadline } : {}),
    cost: { robot_hours: result.robot_hours, environment_hours: result.environment_hours, cost_usd: result.cost_usd },
  };
}
