/**
 * Any two or more runs side by side (GET /v1/comparisons, the console's `#/compare`, `assay compare`):
 * each side's rate with its interval and n, the difference of every pair with the statistics that fit
 * runs that were not paired, and a warning when their pins differ.
 *
 * Sides. A run of kind compare, transfer or matrix is one side per unit (a policy, an embodiment, a
 * robot x environment cell: its units must not be pooled); any other run is its top-level Result.
 *
 * Statistics. The runs were not paired (their episodes share no seed by design, and may share no cell),
 * so each pair gets the two-sample rule of unpaired compare (docs/statistics.md, "Two model-level
 * rates"): the beta-binomial posterior difference of the two model-level rates, each side on its own
 * cells under the prior its own Result recorded (`claim: "model"`), and beside it Newcombe's interval of
 * the pooled counts (about these cells). With more than one pair the intervals are simultaneous: each at
 * 1 - 0.05 / pairs (Bonferroni), so that all of them hold together with 95% confidence.
 */
import { armPosterior, differenceOfPosteriors, type ArmPosterior } from "../stats/beta-binomial-difference.js";
import type { HeadlinePrior } from "../stats/beta-binomial-rate.js";
import { newcombeDifference } from "../stats/two-proportions.js";
import { wilsonInterval } from "../stats/wilson.js";
import { canonicalJson } from "../json/canonical-json.js";
import type { RunRecord } from "../store/runs-repo.js";
import { differenceSentence, percent, roundForPeople, shownBy, type DifferenceShown } from "../runs/compare-headline.js";
import { kindModule } from "../kinds/registry.js";

/** Runs one comparison may name. */
export const SELECTION_RUNS_MAX = 6;
/** Sides one comparison may have (a compare run brings two): at most 15 pairs, each a posterior difference. */
export const SELECTION_SIDES_MAX = 6;
/** The confidence all the pairs' intervals hold with together. */
export const SELECTION_FAMILY_LEVEL = 0.95;

/** Kinds whose units are each a side (never pooled). */
const PER_UNIT_KINDS = new Set(["compare", "transfer", "matrix"]);

/** The pins two sides must share for their difference to be about the policy alone. */
export const SELECTION_PINS = ["robot", "environment", "task", "perturbation_rev", "perturbation"] as const;
type PinName = (typeof SELECTION_PINS)[number];

/** One side as the comparison shows it. */
export interface SelectionSide {
  run_id: string;
  /** The unit's key for a per-unit kind (`policy:expert`), else null. */
  unit: string | null;
  /** What sentences call it: the policy's name when that tells the sides apart, else the run id (and unit). */
  label: string;
  kind: string;
  policy_name: string | null;
  /** Another account's run, readable because it is published on a leaderboard. */
  published: boolean;
  robot: string;
  environment: string;
  task: string;
  perturbation_rev: string;
  /** The run's perturbation settings as submitted (canonical JSON), or null for none. */
  perturbation: string | null;
  n: number;
  successes: number;
  success_rate: number;
  /** The model-level interval of the side's own Result. */
  ci95: [number, number];
  interval_method: string;
  /** Wilson's 95% interval of successes / n. */
  wilson95: [number, number];
  text: string;
}

/** One pair's difference, first side minus second. */
export interface SelectionDifference {
  a: string;
  b: string;
  diff: number;
  ci: [number, number];
  ci_level: number;
  method: string;
  claim: "model" | "these_cells";
  shown: DifferenceShown;
  probability_a_greater: number | null;
  these_cells: { diff: number; ci: [number, number]; ci_level: number; method: string; shown: DifferenceShown };
  sentence: string;
}

export interface Selection {
  object: "comparison";
  runs: string[];
  sides: SelectionSide[];
  differences: SelectionDifference[];
  simultaneous: { pairs: number; family_level: number; ci_level: number; adjustment: "none" | "bonferroni" };
  pins_differ: Array<{ pin: PinName; values: string[] }>;
  warnings: string[];
  lines: string[];
}

/** What the comparison reads of a run: its record, and whether the caller sees it only because it is published. */
export interface SelectedRun {
  run: Pick<RunRecord, "id" | "kind" | "status" | "completed" | "request" | "resolvedPins" | "result" | "units">;
  published: boolean;
}

type Loose = Record<string, any>;

interface RawSide extends Omit<SelectionSide, "label" | "text"> {
  cells: Array<{ k: number; n: number }>;
  prior?: HeadlinePrior;
  unitName: string | null;
}

function policyNameOf(policy: unknown, given: unknown): string | null {
  if (typeof given === "string" && given.trim() !== "") return given.trim();
  const p = (policy ?? {}) as Loose;
  const id = p.image ?? p.hf ?? p.url;
  return typeof id === "string" ? id : null;
}

function sideOf(selected: SelectedRun, result: Loose, unit: Loose | null): RawSide {
  const { run } = selected;
  const request = run.request as Loose;
  const pins = run.resolvedPins as Loose;
  const n = Number(result.n ?? 0);
  const successes = Math.round(Number(result.success_rate ?? 0) * n);
  const cells = (result.cells?.by_cell ?? []) as Array<{ successes: number; n: number }>;
  return {
    run_id: run.id, unit: unit ? String(unit.key) : null, kind: run.kind,
    policy_name: unit ? policyNameOf(unit.policy, unit.policy_name ?? (kindModule(run.kind).traits.comparesPolicies ? undefined : request.policy_name)) : policyNameOf(request.policy, request.policy_name),
    unitName: unit ? String(unit.policy_name ?? unit.role ?? unit.key) : null,
    published: selected.published,
    robot: String(unit?.robot ?? pins.robot ?? ""), environment: String(unit?.environment ?? pins.environment ?? ""), task: String(unit?.task ?? pins.task ?? ""),
    perturbation_rev: String(pins.perturbation_rev ?? ""),
    perturbation: request.perturbation === undefined || request.perturbation === null ? null : canonicalJson(request.perturbation),
    n, successes, success_rate: n === 0 ? 0 : successes / n,
    ci95: Array.isArray(result.ci95) ? [result.ci95[0], result.ci95[1]] : wilsonInterval(successes, n),
    interval_method: String(result.interval_method ?? "wilson"),
    wilson95: wilsonInterval(successes, n),
    cells: cells.map((c) => ({ k: c.successes, n: c.n })),
    prior: result.cells?.prior,
  };
}

/** The sides of the selected runs, in the order given (a per-unit kind's units in their order). */
export function selectionSides(selected: readonly SelectedRun[]): RawSide[] {
  return selected.flatMap((s) => {
    const result = (s.run.result ?? {}) as Loose;
    const units = Array.isArray(result.units) ? (result.units as Loose[]) : [];
    return PER_UNIT_KINDS.has(s.run.kind) && units.length > 0 ? units.map((u) => sideOf(s, u.result ?? {}, u)) : [sideOf(s, result, null)];
  });
}

/** Labels that tell the sides apart: policy names when they do, else run ids (with the unit's name). */
function labelsOf(sides: readonly RawSide[]): string[] {
  const names = sides.map((s) => s.policy_name);
  if (names.every((x) => x !== null) && new Set(names).size === names.length) return names as string[];
  const runs = sides.map((s) => s.run_id);
  return sides.map((s) => (runs.filter((id) => id === s.run_id).length > 1 || s.unitName !== null ? `${s.run_id} ${s.unitName}` : s.run_id));
}

function round2(ci: readonly number[]): [number, number] {
  return [roundForPeople(ci[0]), roundForPeople(ci[1])];
}

const levelWords = (level: number) => `${Number((level * 100).toFixed(1))}%`;

/**
 * The comparison of the selected runs. Every side must have at least one finished episode (the
 * caller checks, with the error the API answers). Each side's posterior is computed once; a pair's
 * difference costs tens of milliseconds of CPU, so `pause` (a turn of the event loop) runs between pairs.
 */
export async function compareSelection(selected: readonly SelectedRun[], pause: () => Promise<void> = async () => {}): Promise<Selection> {
  const raw = selectionSides(selected);
  const labels = labelsOf(raw);
  const pairs = (raw.length * (raw.length - 1)) / 2;
  const level = pairs > 1 ? 1 - (1 - SELECTION_FAMILY_LEVEL) / pairs : SELECTION_FAMILY_LEVEL;
  const sides: SelectionSide[] = raw.map(({ cells: _cells, prior: _prior, unitName: _unit, ...side }, i) => ({
    ...side, label: labels[i], success_rate: roundForPeople(side.success_rate), ci95: round2(side.ci95), wilson95: round2(side.wilson95),
    text: side.n === 0
      ? `${labels[i]}: no finished episode`
      : `${labels[i]}: ${percent(side.successes / side.n)} (${side.successes} of ${side.n}; 95% Wilson interval ${percent(side.wilson95[0])} to ${percent(side.wilson95[1])})`,
  }));

  const posteriors = new Map<number, ArmPosterior>();
  const posteriorOf = (i: number) => {
    if (!posteriors.has(i)) posteriors.set(i, armPosterior(raw[i].cells, raw[i].prior));
    return posteriors.get(i)!;
  };
  const differences: SelectionDifference[] = [];
  for (let i = 0; i < raw.length; i++) {
    for (let j = i + 1; j < raw.length; j++) {
      const [a, b] = [raw[i], raw[j]];
      const these = newcombeDifference(a.successes, a.n, b.successes, b.n, level);
      // A Result stored before per-cell counts were kept has no cells: only the claim about these cells is possible.
      const model = a.cells.length > 0 && b.cells.length > 0 ? differenceOfPosteriors(posteriorOf(i), posteriorOf(j), level) : null;
      await pause();
      const d = model ?? these;
      const claim = model ? "model" as const : "these_cells" as const;
      const words = (label: string) => ({ short: label, subject: `${label}'s success rate`, than: `${label}'s` });
      differences.push({
        a: labels[i], b: labels[j], diff: roundForPeople(d.diff), ci: round2(d.ci), ci_level: roundForPeople(level), method: d.method, claim,
        shown: shownBy(d.ci), probability_a_greater: model ? roundForPeople(model.probability_a_greater) : null,
        these_cells: { diff: roundForPeople(these.diff), ci: round2(these.ci), ci_level: roundForPeople(level), method: these.method, shown: shownBy(these.ci) },
        sentence: differenceSentence({ a: words(labels[i]), b: words(labels[j]), diff: d.diff, ci: d.ci, ci_level: level, claim }),
      });
    }
  }

  const pinsDiffer = SELECTION_PINS.flatMap((pin) => {
    const values = [...new Set(raw.map((s) => s[pin] ?? "none"))];
    return values.length > 1 ? [{ pin, values }] : [];
  });
  const PIN_WORDS: Record<PinName, string> = {
    robot: "robot", environment: "environment", task: "task revision", perturbation_rev: "perturbation revision", perturbation: "perturbation settings",
  };
  const warnings = pinsDiffer.map(({ pin, values }) =>
    `The sides differ in ${PIN_WORDS[pin]} (${values.join(", ")}): a difference between them may come from the ${PIN_WORDS[pin]}, not the policy.`);

  const lines = [
    ...differences.map((d) => d.sentence),
    pairs > 1
      ? `The ${pairs} intervals hold together with ${levelWords(SELECTION_FAMILY_LEVEL)} confidence (Bonferroni: each at ${levelWords(level)}); the runs were not paired, so each side is modelled on its own cells (beta-binomial posterior).`
      : "The runs were not paired, so each side is modelled on its own cells (beta-binomial posterior).",
    ...warnings,
    ...sides.map((s) => s.text),
  ];
  return {
    object: "comparison",
    runs: [...new Set(raw.map((s) => s.run_id))],
    sides,
    differences,
    simultaneous: { pairs, family_level: SELECTION_FAMILY_LEVEL, ci_level: roundForPeople(level), adjustment: pairs > 1 ? "bonferroni" : "none" },
    pins_differ: pinsDiffer,
    warnings,
    lines,
  };
}
