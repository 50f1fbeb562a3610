/** GET /v1/comparisons: two or more runs side by side (coordinator/leaderboards/compare-selection.ts). */
import { z } from "zod";
import { SELECTION_PINS, SELECTION_RUNS_MAX, SELECTION_SIDES_MAX } from "../../leaderboards/compare-selection.js";
import { component, queryText } from "./common.js";

/** Query of GET /v1/comparisons. */
export const ComparisonQuery = z.object({
  runs: queryText("runs", `2..${SELECTION_RUNS_MAX} run ids, comma-separated: the account's runs or published ones`),
});

const Interval = z.tuple([z.number().min(0).max(1), z.number().min(0).max(1)]);
const SignedInterval = z.tuple([z.number().min(-1).max(1), z.number().min(-1).max(1)]);
const Shown = z.enum(["a_higher", "b_higher", "none"]).describe("what the interval shows: a difference only when it excludes 0");

const Side = z.strictObject({
  run_id: z.string(),
  unit: z.string().nullable().describe("the unit's key for kinds compare, transfer and matrix (each unit is a side), else null"),
  label: z.string().describe("what the sentences call the side: its policy name when that tells the sides apart, else the run id (and unit)"),
  kind: z.string(),
  policy_name: z.string().nullable().describe("policy_name, else the policy's image, hf or url"),
  published: z.boolean().describe("another account's run, readable because it is published on a leaderboard"),
  robot: z.string(), environment: z.string(), task: z.string(), perturbation_rev: z.string(),
  perturbation: z.string().nullable().describe("the run's perturbation settings as submitted, canonical JSON; null for none"),
  n: z.number().int().min(0), successes: z.number().int().min(0), success_rate: z.number().min(0).max(1),
  ci95: Interval.describe("the side's own model-level interval (its Result's ci95)"), interval_method: z.string(),
  wilson95: Interval.describe("Wilson's 95% interval of successes / n"),
  text: z.string(),
});

const Difference = z.strictObject({
  a: z.string(), b: z.string().describe("labels of the two sides; the difference is a - b"),
  diff: z.number().min(-1).max(1), ci: SignedInterval, ci_level: z.number().gt(0).lt(1).describe("each pair's level: 1 - 0.05 / pairs"),
  method: z.string().describe("beta-binomial-posterior-difference (each side on its own cells); newcombe-hybrid-score for a Result stored without per-cell counts"),
  claim: z.enum(["model", "these_cells"]), shown: Shown, probability_a_greater: z.number().min(0).max(1).nullable(),
  these_cells: z.strictObject({ diff: z.number().min(-1).max(1), ci: SignedInterval, ci_level: z.number().gt(0).lt(1), method: z.string(), shown: Shown })
    .describe("Newcombe's interval of the pooled counts: about the cells the episodes ran on"),
  sentence: z.string().describe("the claim in one sentence; says no difference was shown when the interval contains 0"),
});

/** The comparison of the selected runs. */
export const Comparison = component("Comparison", z.strictObject({
  object: z.literal("comparison"),
  runs: z.array(z.string()),
  sides: z.array(Side).min(2).max(SELECTION_SIDES_MAX),
  differences: z.array(Difference).describe("every pair of sides, in order (first minus second)"),
  simultaneous: z.strictObject({
    pairs: z.number().int().min(1), family_level: z.number(), ci_level: z.number(), adjustment: z.enum(["none", "bonferroni"]),
  }).describe("all the pairs' intervals hold together with family_level confidence"),
  pins_differ: z.array(z.strictObject({ pin: z.enum(SELECTION_PINS), values: z.array(z.string()) })).describe("pins on which the sides differ"),
  warnings: z.array(z.string()).describe("one sentence per pin that differs"),
  lines: z.array(z.string()).describe("the comparison in words, as the console and assay compare print it"),
}).describe("Two or more runs side by side with the statistics of unpaired runs (docs/api.md, \"Comparisons\")."));
