/**
 * Kind `compare`: two policies on one robot pin, environment and task.
 *
 * Plan. `episodes` is the number of episodes per policy. With `paired: true` (default) episode
 * pair i runs both policies from the same episode seed, so the same initial conditions (layout,
 * lighting, distractors, instruction); which policy goes first within a pair is a seeded coin flip
 * (reproducible from the run seed), so drift over a session (battery, lighting, wear) does not
 * always favour one policy. With `paired: false` every episode gets its own seed.
 *
 * Result. `units` holds one Result per policy (key `policy:<name>`); `comparison` holds the
 * difference A - B with its 95% interval and `claim`, what it is about. Paired: both episodes of a
 * pair run on the same cell (`assign.block`, scheduler/pair-blocking.ts), and the model-level claim
 * (`claim: "model"`) comes from the within-cell paired differences with a cell-to-cell random effect
 * (stats/paired-cell-difference.ts), the counts per cell beside it; the paired interval over complete
 * pairs (both episodes finished) and an exact McNemar test on the discordant pairs are the claim about
 * these cells (`these_cells`; a run planned before blocking gives only that). Unpaired, the beta-binomial posterior difference of the
 * two model-level rates, each policy on its own cells (`claim: "model"`, with P(A > B)), and the
 * Newcombe interval beside it under `these_cells` (comparison-claim.ts).
 *
 * Sequential (`sequential: {alpha, beta, delta}`): after every finished episode the complete pairs,
 * in the order they completed, are fed to a sequential test; once it decides, the pending episodes
 * are cancelled (episodes in flight still finish and are counted) and the run completes with
 * `stopped_early: true`. The test's cap is `episodes` pairs, the submitter's budget; its power at
 * that cap depends on how many pairs turn out discordant, so the run shows it at submission
 * (`sequential_power`, exact) with the pairs that would reach 1 - beta. The result carries beside
 * the fixed-n interval an anytime-valid one (a confidence sequence), the one to cite after a
 * sequential stop.
 */

/** Discordant shares the submission's power table is computed at. */
export const POWER_DISCORDANT_SHARES = [0.1, 0.2, 0.3, 0.5];

/** The exact power of the sequential test at its cap, per discordant share (shown on the Run). */
export interface SequentialPower {
  max_pairs: number;
  by_discordant_share: Array<{ discordant_share: number; power: number; expected_pairs: number; pairs_for_power: number | null }>;
  note: string;
}

function sequentialPower(sequential: NonNullable<CompareSettings["sequential"]>, maxPairs: number): SequentialPower {
  const shareA = 0.5 + sequential.delta;
  return {
    max_pairs: maxPairs,
    by_discordant_share: POWER_DISCORDANT_SHARES.map((share) => {
      const oc = sequentialCompareOperatingCharacteristics({ ...sequential, maxPairs }, share, shareA);
      let needed: number | null;
      try { needed = pairsForPower(sequential, share); } catch { needed = null; }
      return { discordant_share: share, power: oc.a_better, expected_pairs: oc.expected_pairs, pairs_for_power: needed };
    }),
    note: `power: the chance of declaring the better policy when it wins a discordant pair (one succeeds, the other fails) with probability ${shareA}, `
      + `at a cap of ${maxPairs} pairs (episodes); it depends on the share of discordant pairs, unknown before the run. `
      + `pairs_for_power: the episodes per policy that would give power ${1 - sequential.beta} (null: out of reach).`,
  };
}
import { nextTurn } from "../async/next-turn.js";
import { createSequentialCompare, differenceConfidenceSequence, pairsForPower, sequentialCompareOperatingCharacteristics } from "../stats/sequential-compare.js";
import { mcnemarExact } from "../stats/mcnemar.js";
import { pairedDifferenceInterval } from "../stats/paired-difference.js";
import { armOf, modelLevelDifference, pairedModelLevelDifference, theseCellsStatement, type CellPairs } from "./comparison-claim.js";
import { parseEpisodesSpec } from "../runs/episodes-spec.js";
import { contract, isPlainObject, q } from "../runs/field-checks.js";
import { type ValidatedRun, type ValidateRunContext } from "../runs/run-request.js";
import { episodeSeed, setKindState, type NewEpisode, type RunRecord } from "../store/runs-repo.js";
import { resolveTask } from "../runs/pin-resolution.js";
import { validateCommon } from "../runs/common-fields.js";
import { openUnit, resolveUnit, validatedKindRun, type ResolvedUnit } from "./kind-common.js";
import { cancelPendingEpisodes, countEpisodesOfRun } from "../store/episodes-repo.js";
import { listEpisodes } from "../store/done-episodes-repo.js";
import type { KindProgressContext, KindResultContext, RunKind } from "./kind.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import { headlineResult, unitResults } from "./unit-results.js";
import { policySucceeded } from "../runs/policy-outcome.js";
import { compareHeadline } from "../runs/compare-headline.js";
import { z } from "zod";
import { COMMON_RUN_FIELDS, EpisodesSpec, Policy, environmentRef, robotPin, taskRef } from "../runs/run-schemas.js";
import { boundedRecord } from "../json/field-bounds.js";


export interface CompareSettings {
  paired: boolean;
  sequential?: { alpha: number; beta: number; delta: number };
  /** With sequential: its exact power at the cap, computed at submission. */
  sequential_power?: SequentialPower;
}

async function planCompare(body: Record<string, unknown>, ctx: ValidateRunContext): Promise<ValidatedRun> {
  const task = await resolveTask(ctx, body.task);
  const policies = body.policies;
  if (!isPlainObject(policies) || Object.keys(policies).length !== 2) {
    contract(`policies must be an object naming exactly two policies, {"<name>": Policy, "<name>": Policy}; got ${q(policies)}`);
  }
  const names = Object.keys(policies);
  for (const name of names) {
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name)) contract(`policies: name ${q(name)} must be 1..64 characters of letters, digits, "_", "." and "-"`);
  }
  const resolved: ResolvedUnit[] = [];
  for (const name of names) {
    resolved.push(await resolveUnit(ctx, { robot: body.robot, environment: body.environment, task, policy: policies[name], key: `policy:${name}`, policyName: name, where: `policies.${name}` }));
  }
  const count = parseEpisodesSpec(body.episodes).count;
  const paired = (body.paired as boolean | undefined) ?? true;
  let sequential: CompareSettings["sequential"];
  if (body.sequential !== undefined) {
    const given = body.sequential as Record<string, unknown>;
    if (!paired) contract(`sequential needs paired: true (the test runs on complete pairs)`);
    sequential = {
      alpha: openUnit("sequential.alpha", given.alpha, 0.05),
      beta: openUnit("sequential.beta", given.beta, 0.2),
      delta: openUnit("sequential.delta", given.delta, 0.2),
    };
    // The test's effect size is on the discordant-share scale: A wins a discordant pair with 1/2 + delta.
    if (sequential.delta >= 0.5) contract(`sequential.delta must be in (0, 0.5): A wins a discordant pair with probability 1/2 + delta; got ${q(sequential.delta)}`);
  }
  const common = validateCommon(body, ctx, resolved[0].environment);
  const episodes: NewEpisode[] = [];
  for (let pair = 0; pair < count; pair++) {
    // Seeded order within the pair: reproducible from the run seed, independent of the layout seed.
    const bFirst = (episodeSeed(common.seed ^ 0x2f6b1d3, pair) & 1) === 1;
    const order = bFirst ? [1, 0] : [0, 1];
    // One hash per pair when paired (planning 10,000 episodes runs on the request path). Pair i's episodes are
    // indexes 2i and 2i + 1: the scheduler reads a pair's cell by them (store/episode-subsets-repo.ts listCellsOfPairs).
    const pairSeed = paired ? episodeSeed(common.seed, pair) : 0;
    order.forEach((unit, position) => {
      const seed = paired ? pairSeed : episodeSeed(common.seed, 2 * pair + unit);
      // Paired: both episodes of the pair on one cell (blocking by cell, scheduler/pair-blocking.ts).
      episodes.push({ unit, seed, assign: { pair, order: position, ...(paired ? { block: "cell" as const } : {}) } });
    });
  }
  const settings: CompareSettings = { paired, ...(sequential ? { sequential, sequential_power: sequentialPower(sequential, count) } : {}) };
  return validatedKindRun({
    kind: "compare", body, units: resolved.map((r) => r.unit), episodes, seed: common.seed, priority: common.priority,
    kindPlan: { compare: settings },
  });
}

function settingsOf(run: Pick<RunRecord, "plan">): CompareSettings {
  return (run.plan.kind?.compare as CompareSettings | undefined) ?? { paired: true };
}

interface CompletePair {
  pair: number;
  a: boolean;
  b: boolean;
  /** When the later of the two finished. */
  at: string;
  /** The cell both ran on; null when the pair was split over two cells. */
  cell: string | null;
}

/** Pairs whose two episodes both finished, in the order they completed (ties by pair index). */
function completePairs(episodes: readonly EpisodeRecord[]): CompletePair[] {
  const byPair = new Map<number, { a?: EpisodeRecord; b?: EpisodeRecord }>();
  for (const e of episodes) {
    const pair = e.assign.pair;
    if (pair === undefined || e.status !== "done") continue;
    const entry = byPair.get(pair) ?? {};
    if (e.unit === 0) entry.a = e;
    else entry.b = e;
    byPair.set(pair, entry);
  }
  const pairs: CompletePair[] = [];
  for (const [pair, { a, b }] of byPair) {
    if (!a || !b) continue;
    const at = (a.finishedAt ?? "") > (b.finishedAt ?? "") ? a.finishedAt ?? "" : b.finishedAt ?? "";
    pairs.push({ pair, a: policySucceeded(a), b: policySucceeded(b), at, cell: a.cellId !== null && a.cellId === b.cellId ? a.cellId : null });
  }
  return pairs.sort((x, y) => x.at.localeCompare(y.at) || x.pair - y.pair);
}

/** Complete pairs tallied per cell (pairs split over two cells left out), cells in name order. */
function cellPairs(pairs: readonly CompletePair[]): CellPairs[] {
  const byCell = new Map<string, CellPairs>();
  for (const p of pairs) {
    if (p.cell === null) continue;
    const c = byCell.get(p.cell) ?? { cell: p.cell, n: 0, both: 0, onlyA: 0, onlyB: 0 };
    c.n += 1;
    if (p.a && p.b) c.both += 1;
    else if (p.a) c.onlyA += 1;
    else if (p.b) c.onlyB += 1;
    byCell.set(p.cell, c);
  }
  return [...byCell.values()].sort((x, y) => x.cell.localeCompare(y.cell));
}

interface SequentialState {
  decision: string;
  pairs_used: number;
  reason?: string | null;
  method?: string;
  decided_at?: string;
}

/**
 * After an episode finished: feeds the complete pairs to the sequential test and, once it decides,
 * records the decision (runs.kind_state) and cancels the pending episodes. Call it inside the
 * transaction that checks completion. A run without `sequential`, or decided, reads no episode; one
 * deciding reads its finished episodes, since the test replays every complete pair in the order the
 * pairs completed (a pair's finish time comes from its cell, so a new pair may sort before others).
 */
async function compareProgress(ctx: KindProgressContext, run: RunRecord): Promise<undefined> {
  const { tx, now } = ctx;
  const settings = settingsOf(run);
  if (!settings.sequential) return;
  const state = (run.kindState ?? {}) as { sequential?: SequentialState };
  if (state.sequential && state.sequential.decision !== "continue") return;
  const test = createSequentialCompare({ ...settings.sequential, maxPairs: await countEpisodesOfRun(tx, run.id) / 2 });
  let decision = "continue";
  let used = 0;
  // completePairs counts done episodes only.
  for (const pair of completePairs(await listEpisodes(tx, run.id))) {
    decision = test.update({ a: pair.a, b: pair.b });
    used += 1;
    if (decision !== "continue") break;
  }
  const snapshot = test.state();
  await setKindState(tx, run.id, {
    ...state,
    sequential: {
      decision, pairs_used: used, reason: snapshot.reason, method: snapshot.method, log_lr_a: snapshot.log_lr_a, log_lr_b: snapshot.log_lr_b,
      ...(decision !== "continue" ? { decided_at: now.toISOString() } : {}),
    },
  });
  if (decision !== "continue") await cancelPendingEpisodes(tx, run.id);
  return undefined;
}

async function compareResult(ctx: KindResultContext, run: RunRecord, episodes: readonly EpisodeRecord[]): Promise<Record<string, unknown>> {
  const units = await unitResults(ctx, run, episodes);
  // The comparison (its model-level difference integrates both arms' posteriors) in a turn of its own, after the units'.
  await nextTurn();
  const settings = settingsOf(run);
  const [a, b] = units;
  let comparison: Record<string, unknown>;
  if (settings.paired) {
    const pairs = completePairs(episodes);
    const tally = { both: 0, onlyA: 0, onlyB: 0, neither: 0 };
    for (const p of pairs) {
      if (p.a && p.b) tally.both += 1;
      else if (p.a) tally.onlyA += 1;
      else if (p.b) tally.onlyB += 1;
      else tally.neither += 1;
    }
    const interval = pairs.length > 0 ? pairedDifferenceInterval(tally, 0.95) : { diff: 0, ci: [-1, 1], method: "none: no complete pair" };
    const mcnemar = mcnemarExact(tally.onlyA, tally.onlyB);
    const theseCells = {
      claim: "these_cells", statement: theseCellsStatement("the paired interval over complete pairs"),
      diff: interval.diff, ci: interval.ci, ci_level: 0.95, method: interval.method,
    };
    const names = { a: a.policy_name ?? "A", b: b.policy_name ?? "B" };
    // Runs planned before blocking by cell (no assign.block) have pairs split over cells: their claim stays about these cells.
    const blocked = episodes.some((e) => e.assign.block === "cell");
    comparison = {
      a: a.policy_name, b: b.policy_name, paired: true,
      ...(blocked ? pairedModelLevelDifference(cellPairs(pairs), pairs.filter((p) => p.cell === null).length, names, armOf(a.result).prior) : theseCells),
      ...(blocked ? { these_cells: theseCells } : {}),
      pairs: pairs.length, both: tally.both, only_a: tally.onlyA, only_b: tally.onlyB, neither: tally.neither,
      mcnemar: { b: mcnemar.b, c: mcnemar.c, n_discordant: mcnemar.n_discordant, p_value: mcnemar.p_value },
      ...(settings.sequential
        ? {
            ci_validity: "fixed-n: valid for a pair count fixed in advance; after a sequential stop cite ci_anytime",
            ci_anytime: { ...differenceConfidenceSequence(tally, 0.05), validity: "anytime-valid: covers the difference at every pair count at once, so after any stop" },
          }
        : {}),
    };
  } else {
    const names = { a: a.policy_name ?? "A", b: b.policy_name ?? "B" };
    comparison = { a: a.policy_name, b: b.policy_name, paired: false, ...modelLevelDifference(armOf(a.result), armOf(b.result), names) };
  }
  const state = (run.kindState ?? {}) as { sequential?: SequentialState };
  const stoppedEarly = Boolean(state.sequential && state.sequential.decision !== "continue" && episodes.some((e) => e.status === "cancelled"));
  if (settings.sequential) {
    comparison.sequential = {
      ...settings.sequential, decision: state.sequential?.decision ?? "continue", pairs_used: state.sequential?.pairs_used ?? 0,
      reason: state.sequential?.reason ?? null, method: state.sequential?.method ?? "sprt-discordant-sobel-wald", decided_at: state.sequential?.decided_at ?? null,
    };
  }
  const population = {
    units: [0],
    description: `policy ${a.policy_name}, the first of policies: the comparison is ${a.policy_name} - ${b.policy_name}, and each policy's own rate is in units[]`,
  };
  // The answer up front (runs/compare-headline.ts): what the console, the CLI and the PDF print first.
  return { ...(await headlineResult(ctx, run, episodes, units, population)), units, comparison, headline: compareHeadline({ units, comparison }), stopped_early: stoppedEarly };
}

/** The body of a POST /v1/runs of this kind: its shape, declared once (checked before `plan`). */
const schema = z.strictObject({
  kind: z.literal("compare"), robot: robotPin, environment: environmentRef, task: taskRef,
  policies: boundedRecord(Policy, { maxEntries: 2, message: `policies must be an object naming exactly two policies, {"<name>": Policy, "<name>": Policy}` }).describe("exactly two policies by name (letters, digits, _ . -; 1..64 characters)"),
  episodes: EpisodesSpec,
  paired: z.boolean().optional().describe("same initial conditions per episode pair; default true"),
  sequential: z.strictObject({
    alpha: z.number().gt(0).lt(1).optional(), beta: z.number().gt(0).lt(1).optional(), delta: z.number().gt(0).lt(0.5).optional(),
  }).optional().describe("stop early once the paired test decides (needs paired)"),
  ...COMMON_RUN_FIELDS,
}).describe("kind compare: two policies on the same robot, environment and task");

export const compareKind: RunKind = {
  name: "compare",
  traits: { hasUnits: true, comparesPolicies: true, leaderboard: "task", paperRows: "units", unitHeading: "Policy", acceptsCheckpoints: false, replayable: false },
  schema, plan: planCompare, result: compareResult, progress: compareProgress,
};
