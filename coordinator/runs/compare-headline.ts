/**
 * The answer of a two-sided comparison, up front: what a compare's `comparison` or a transfer's `gap`
 * says, as one headline every surface prints the same way (the Result's `headline`, the console's
 * result card, `assay runs get`, the PDF report; docs/api.md, "The compare headline").
 *
 * It states the difference with its direction, interval, level and method, the test beside it, the
 * claim it supports in one plain sentence and each side's rate with its Wilson interval and n. The
 * sentence never says more than the interval does: when the interval contains 0 it says that no
 * difference was shown. Numbers are rounded for people (4 significant digits in the JSON, whole
 * percentage points in the words unless a bound would round to 0).
 *
 *   Policy expert's success rate is higher than novice's by 45 points (95% interval 17 to 71) for a new cell of the robot model.
 */
import { wilsonInterval } from "../stats/wilson.js";

/** What a difference's interval shows. */
export type DifferenceShown = "a_higher" | "b_higher" | "none";

/** One side of the comparison. */
export interface ArmHeadline {
  /** `expert` (a compare's policy name), `target` or `source` (a transfer's side). */
  label: string;
  robot: string | null;
  n: number;
  successes: number;
  success_rate: number;
  /** Wilson's 95% interval of successes / n (episodes counted as independent). */
  wilson95: [number, number];
  /** The side's model-level interval when its Result carries one (beta-binomial posterior), else null. */
  ci95: [number, number] | null;
  /** `expert: 100% (20 of 20; 95% Wilson interval 83.9% to 100%)`. */
  text: string;
}

/** The difference A − B as the comparison defines it. */
export interface DifferenceHeadline {
  /** `expert - novice`, `target - source`. */
  of: string;
  diff: number;
  ci: [number, number];
  ci_level: number;
  method: string;
  /** `model`: about a new cell of the robot model; `these_cells`: about the cells the episodes ran on. */
  claim: string;
  shown: DifferenceShown;
  /** P(A's rate > B's | data), where the method gives one. */
  probability_a_greater: number | null;
}

/** A compare's or transfer's headline: Result.headline. */
export interface CompareHeadline {
  difference: DifferenceHeadline;
  /** The claim about these cells beside a model-level one (absent when the difference is itself about these cells). */
  these_cells: { diff: number; ci: [number, number]; ci_level: number; method: string; shown: DifferenceShown } | null;
  /** The exact McNemar test of a paired compare (about these cells), else null. */
  test: { method: string; p_value: number; n_discordant: number } | null;
  arms: [ArmHeadline, ArmHeadline];
  /** The claim in one plain sentence. */
  sentence: string;
  /** The sentence, then the claim about these cells with its test, then each side's rate: what every surface prints. */
  lines: string[];
}

/** 4 significant digits: 0.30000000000000004 reads 0.3; a small bound keeps its sign. */
export function roundForPeople(x: number): number {
  return x === 0 || !Number.isFinite(x) ? x : Number(x.toPrecision(4));
}

const round2 = (ci: readonly number[]): [number, number] => [roundForPeople(ci[0]), roundForPeople(ci[1])];

/** Percentage points, whole unless that would show a non-zero value as 0: 0.3 -> "30", 0.004 -> "0.4". */
export function points(x: number): string {
  const value = x * 100;
  for (let digits = 0; digits <= 3; digits++) {
    const text = Math.abs(value).toFixed(digits);
    if (Number(text) !== 0 || value === 0) return `${value < 0 && Number(text) !== 0 ? "-" : ""}${text}`;
  }
  return value.toPrecision(1);
}

/** Signed points: "+30", "-5", "0". */
const signedPoints = (x: number) => {
  const text = points(x);
  return text.startsWith("-") || Number(text) === 0 ? text : `+${text}`;
};

/** A rate as a percentage with at most one decimal: 0.8333 -> "83.3%", 1 -> "100%". */
export function percent(rate: number): string {
  return `${Number((rate * 100).toFixed(1))}%`;
}

/** What the interval shows: a difference only when it excludes 0. */
export function shownBy(ci: readonly [number, number]): DifferenceShown {
  return ci[0] > 0 ? "a_higher" : ci[1] < 0 ? "b_higher" : "none";
}

const CLAIM_WORDS: Record<string, string> = { model: "for a new cell of the robot model", these_cells: "on the cells and conditions these episodes ran on" };

/** How a side reads in a sentence. */
export interface SideWords {
  /** `expert`, `target`: in "expert - novice". */
  short: string;
  /** `Policy expert's success rate`, `The policy's success rate on the target so101@3.11`. */
  subject: string;
  /** `novice's`, `on the source so100@1.0`: after "higher than". */
  than: string;
}

/** What a sentence needs of a difference. */
export interface SentenceInput {
  a: SideWords;
  b: SideWords;
  diff: number;
  ci: readonly [number, number];
  ci_level: number;
  claim: string;
}

/**
 * The claim in one sentence. A difference is claimed only when the interval excludes 0, in the
 * direction it shows; otherwise the sentence says no difference was shown and gives the interval.
 */
export function differenceSentence({ a, b, diff, ci, ci_level, claim }: SentenceInput): string {
  const level = `${Number((ci_level * 100).toFixed(1))}%`;
  const about = CLAIM_WORDS[claim] ?? `(${claim})`;
  const shown = shownBy(ci as [number, number]);
  if (shown === "a_higher") return `${a.subject} is higher than ${b.than} by ${points(diff)} points (${level} interval ${points(ci[0])} to ${points(ci[1])}) ${about}.`;
  if (shown === "b_higher") return `${b.subject} is higher than ${a.than} by ${points(-diff)} points (${level} interval ${points(-ci[1])} to ${points(-ci[0])}) ${about}.`;
  return `No difference between ${a.short} and ${b.short} was shown ${about}: ${a.short} - ${b.short} is ${signedPoints(diff)} points, `
    + `${level} interval ${signedPoints(ci[0])} to ${signedPoints(ci[1])}, which includes 0.`;
}

const METHOD_WORDS: Record<string, string> = {
  "newcombe-paired": "Newcombe's paired interval",
  "newcombe-hybrid-score": "Newcombe's interval",
  "beta-binomial-posterior-difference": "beta-binomial posterior",
  "paired-cell-random-effects-posterior": "paired within-cell differences, cell random effect",
};

/** A side as a Result shows it: counts, and the unit's model-level interval when there is one. */
interface SideInput {
  label: string;
  words: SideWords;
  robot: string | null;
  n: number;
  success_rate: number;
  ci95?: [number, number] | null;
}

function arm(side: SideInput): ArmHeadline {
  const successes = Math.round(side.success_rate * side.n);
  const wilson = wilsonInterval(successes, side.n, 0.95);
  return {
    label: side.label, robot: side.robot, n: side.n, successes,
    success_rate: roundForPeople(side.n === 0 ? 0 : successes / side.n),
    wilson95: round2(wilson), ci95: side.ci95 ? round2(side.ci95) : null,
    text: side.n === 0
      ? `${side.label}: no finished episode`
      : `${side.label}: ${percent(successes / side.n)} (${successes} of ${side.n}; 95% Wilson interval ${percent(wilson[0])} to ${percent(wilson[1])})`,
  };
}

type Loose = Record<string, any>;

function numberPair(x: unknown): [number, number] | null {
  return Array.isArray(x) && x.length === 2 && typeof x[0] === "number" && typeof x[1] === "number" ? [x[0], x[1]] : null;
}

/** The two sides and the difference of a compare's or transfer's Result, or null for other kinds. */
function sidesOf(result: Loose): { a: SideInput; b: SideInput; d: Loose } | null {
  const units = (Array.isArray(result.units) ? result.units : []) as Loose[];
  if (result.comparison && typeof result.comparison === "object" && units.length === 2) {
    const d = result.comparison as Loose;
    const side = (u: Loose, fallback: string): SideInput => {
      const label = String(u.policy_name ?? fallback);
      return { label, words: { short: label, subject: `Policy ${label}'s success rate`, than: `${label}'s` }, robot: u.robot ?? null, n: u.result?.n ?? 0, success_rate: u.result?.success_rate ?? 0, ci95: numberPair(u.result?.ci95) };
    };
    return { a: side(units[0], "A"), b: side(units[1], "B"), d };
  }
  if (result.gap && typeof result.gap === "object") {
    const d = result.gap as Loose;
    const unitCi = (role: string) => numberPair(units.find((u) => u.role === role)?.result?.ci95);
    const side = (role: "target" | "source"): SideInput => {
      const s = (d[role] ?? {}) as Loose;
      const where = `the ${role}${s.robot ? ` ${s.robot}` : ""}`;
      return { label: role, words: { short: role, subject: `The policy's success rate on ${where}`, than: `on ${where}` }, robot: s.robot ?? null, n: s.n ?? 0, success_rate: s.success_rate ?? 0, ci95: unitCi(role) };
    };
    return { a: side("target"), b: side("source"), d };
  }
  return null;
}

/**
 * The headline of a compare's or transfer's Result (its `comparison` or `gap`); null for a Result of
 * another kind, or one with no difference yet.
 */
export function compareHeadline(result: Loose): CompareHeadline | null {
  const sides = sidesOf(result);
  const ci = sides ? numberPair(sides.d.ci) : null;
  if (!sides || !ci || typeof sides.d.diff !== "number") return null;
  const { a, b, d } = sides;
  const ciLevel = typeof d.ci_level === "number" ? d.ci_level : 0.95;
  const claim = typeof d.claim === "string" ? d.claim : "these_cells";
  const method = String(d.method ?? "");
  const sentence = differenceSentence({ a: a.words, b: b.words, diff: d.diff, ci, ci_level: ciLevel, claim });
  const probability = typeof d.probability_a_greater === "number" ? d.probability_a_greater : null;

  const theseRaw = claim === "model" && d.these_cells && numberPair(d.these_cells.ci) ? d.these_cells as Loose : null;
  const these = theseRaw
    ? { diff: roundForPeople(theseRaw.diff), ci: round2(theseRaw.ci), ci_level: theseRaw.ci_level ?? 0.95, method: String(theseRaw.method ?? ""), shown: shownBy(theseRaw.ci) }
    : null;
  const mcnemar = d.mcnemar && typeof d.mcnemar.p_value === "number" ? d.mcnemar as Loose : null;
  const test = mcnemar ? { method: "mcnemar-exact", p_value: roundForPeople(mcnemar.p_value), n_discordant: mcnemar.n_discordant ?? 0 } : null;
  const arms: [ArmHeadline, ArmHeadline] = [arm(a), arm(b)];

  const lines = [sentence];
  const methodWords = METHOD_WORDS[method] ?? method;
  const pWords = probability !== null ? `; P(${a.label} better) = ${probability.toFixed(3)}` : "";
  if (these) {
    lines.push(`Method: ${methodWords}${pWords}. On these cells alone: ${a.label} - ${b.label} ${signedPoints(these.diff)} points `
      + `(${Number((these.ci_level * 100).toFixed(1))}% interval ${signedPoints(these.ci[0])} to ${signedPoints(these.ci[1])}, ${METHOD_WORDS[these.method] ?? these.method})`
      + (test ? `; exact McNemar test on ${test.n_discordant} discordant pair${test.n_discordant === 1 ? "" : "s"}: p = ${pValue(test.p_value)}` : "") + ".");
  } else {
    lines.push(`Method: ${methodWords}${pWords}${test ? `; exact McNemar test on ${test.n_discordant} discordant pair${test.n_discordant === 1 ? "" : "s"}: p = ${pValue(test.p_value)}` : ""}.`);
  }
  lines.push(`${arms[0].text}; ${arms[1].text}.`);

  return {
    difference: {
      of: `${a.label} - ${b.label}`, diff: roundForPeople(d.diff), ci: round2(ci), ci_level: ciLevel, method, claim,
      shown: shownBy(ci), probability_a_greater: probability === null ? null : roundForPeople(probability),
    },
    these_cells: these,
    test,
    arms,
    sentence,
    lines,
  };
}

/** A p value for people: "0.021", "< 0.001". */
export function pValue(p: number): string {
  return p < 0.001 ? "< 0.001" : Number(p.toPrecision(2)).toString();
}
