/**
 * Kind `threshold`: iterate on the commodity (soak) tier until a policy shows `target.success_rate`
 * at confidence `target.ci`, then confirm on the verification tier with fresh episodes.
 *
 * Plan. Two units: `soak` (iterate_on) and `verify` (escalate_to, with `escalate_policy` when the
 * verify embodiment needs another action space; default `policy`). Episodes are created one at a
 * time: after each finished episode of the current phase the sequential test over cells
 * (`createCellThresholdTest`: the posterior probability that the model-level rate is at most the
 * target, under the beta-binomial model of the cells the episodes ran on, against a boundary
 * calibrated so that the false-pass rate stays <= alpha with ICC up to 0.1 on 1-4 cells; at most
 * `episodes` per phase, default 100) over that phase's policy outcomes (an intervened episode is a
 * failure) decides:
 *
 *   soak:   continue -> next soak episode; pass -> webhook `threshold.crossed`, phase verify;
 *           fail -> verdict `not_met`; inconclusive (budget spent undecided) -> verdict
 *           `inconclusive` (the run completes)
 *   verify: continue -> next verify episode; pass -> verdict `verified`, signed POST to
 *           `on_verified.webhook`; fail -> verdict `not_confirmed`; inconclusive -> `inconclusive`
 *
 * Error control. alpha = 1 - ci. A run that declares `policy_stream` may receive checkpoints, and
 * each restarts the soak test, so checkpoint j (1 = the submitted policy) is tested at
 * `checkpointAlpha(alpha, j)` = alpha x 6/(pi^2 j^2): the chance that any checkpoint crosses falsely
 * stays <= alpha however many arrive. A run without `policy_stream` tests its one policy at alpha
 * and takes no checkpoints. The verify phase runs once, at alpha, on fresh episodes.
 *
 * `monthly_cap_usd` is a hard cap on the run's metered cost in the current UTC month: before each
 * new episode, when the cost so far plus one episode's estimate would exceed it, the run stops with
 * `monthly_budget_exceeded` (partial result kept).
 *
 * `on_verified.webhook` must be the URL of one of the account's webhook endpoints (POST
 * /v1/webhooks), so the delivery is signed with a secret the customer holds; it gets a
 * `threshold.crossed` event with `data.phase: "verified"`. `policy_stream.webhook` is recorded (the
 * coordinator does not poll it); checkpoints arrive with POST /v1/runs/{id}/checkpoints.
 */
import { costOfSecondsUsd, episodeEstimateS } from "../runs/estimates.js";
import { computeMeters } from "../runs/meters.js";
import { replaySequential, type ReplayMemo } from "./sequential-replay.js";
import { checkpointAlpha, type ThresholdDecision } from "../stats/sequential-threshold.js";
import { createCellThresholdTest } from "../stats/cell-threshold.js";
import { headlinePriorOfUnit } from "../runs/headline-priors.js";
import { parseEpisodesSpec } from "../runs/episodes-spec.js";
import { rateSummary } from "../runs/result-summary.js";
import { contract, isPlainObject, q } from "../runs/field-checks.js";
import { type ValidatedRun, type ValidateRunContext } from "../runs/run-request.js";
import type { Db } from "../store/database.js";
import { appendEpisodes, episodeSeed, setKindState, setRunUnits, type RunRecord } from "../store/runs-repo.js";
import { enqueueEvent, enqueueEventForEndpoint } from "../webhooks/outbox.js";
import { findLiveEndpointIdByUrl } from "../store/webhooks-repo.js";
import { resolveTask } from "../runs/pin-resolution.js";
import { validateCommon } from "../runs/common-fields.js";
import { openUnit, resolveUnit, validatedKindRun } from "./kind-common.js";
import type { KindDecision, KindProgressContext, KindResultContext, RunKind } from "./kind.js";
import { countEpisodesOfRun, hasOpenEpisodes, type EpisodeRecord } from "../store/episodes-repo.js";
import { listDoneEpisodesOfPhase, listEpisodeRecordsOfMonth } from "../store/episode-subsets-repo.js";
import { headlineResult, unitMeterContext, unitResults } from "./unit-results.js";
import { policySucceeded } from "../runs/policy-outcome.js";
import { z } from "zod";
import { COMMON_RUN_FIELDS, EpisodesSpec, Policy, WebhookTarget, environmentRef, robotPin, taskRef } from "../runs/run-schemas.js";

export const THRESHOLD_MAX_EPISODES_DEFAULT = 100;

interface ThresholdSettings {
  target: number;
  ci: number;
  max_episodes: number;
  monthly_cap_usd: number;
  on_verified_endpoint: string | null;
  on_verified_url: string | null;
  policy_stream_url: string | null;
}

type Phase = "soak" | "verify" | "verified" | "not_met" | "not_confirmed" | "inconclusive";

interface ThresholdState {
  phase: Phase;
  /** Checkpoints pushed with POST /v1/runs/{id}/checkpoints; the soak test restarts at each. */
  checkpoints?: Array<{ at: string; from_index: number; policy: string | undefined }>;
  crossed?: { n: number; successes: number; at: string; checkpoint: number; alpha: number };
  decided?: { n: number; successes: number; at: string };
  event_id?: string;
}

function webhookUrl(field: string, value: unknown): string {
  if (!isPlainObject(value)) contract(`${field} must be an object {"webhook": "<https URL>"}; got ${q(value)}`);
  let protocol = "";
  try { protocol = new URL(String(value.webhook)).protocol; } catch { /* reported below */ }
  if (!["https:", "http:"].includes(protocol)) contract(`${field}.webhook must be an http(s) URL; got ${q(value.webhook)}`);
  return String(value.webhook);
}

async function planThreshold(body: Record<string, unknown>, ctx: ValidateRunContext): Promise<ValidatedRun> {
  const target = body.target as { success_rate: number; ci?: number; task: string };
  const rate = target.success_rate;
  const ci = target.ci ?? 0.95;
  const task = await resolveTask(ctx, target.task);
  const soak = await resolveUnit(ctx, { robot: body.iterate_on, environment: body.environment, task, policy: body.policy, key: "soak", role: "soak", where: "iterate_on" });
  const verify = await resolveUnit(ctx, { robot: body.escalate_to, environment: body.environment, task, policy: body.escalate_policy ?? body.policy, key: "verify", role: "verify", where: "escalate_to" });
  if (soak.model.tier !== "soak") contract(`iterate_on must be a soak-tier robot (commodity pods); ${soak.unit.robot} is ${soak.model.tier}-tier`);
  if (verify.model.tier !== "verify") contract(`escalate_to must be a verify-tier robot; ${verify.unit.robot} is ${verify.model.tier}-tier`);
  const cap = body.monthly_cap_usd;
  if (!(typeof cap === "number" && Number.isFinite(cap) && cap > 0)) contract(`monthly_cap_usd must be a positive number of US dollars; got ${q(cap)}`);
  const maxEpisodes = body.episodes === undefined ? THRESHOLD_MAX_EPISODES_DEFAULT : parseEpisodesSpec(body.episodes).count;
  let endpointId: string | null = null;
  let onVerifiedUrl: string | null = null;
  if (body.on_verified !== undefined) {
    onVerifiedUrl = webhookUrl("on_verified", body.on_verified);
    const endpoint = await findLiveEndpointIdByUrl(ctx.db, ctx.accountId, onVerifiedUrl);
    if (endpoint === undefined) contract(`on_verified.webhook ${q(onVerifiedUrl)} is not a webhook endpoint of this account; register it with POST /v1/webhooks first (keys:admin) so the delivery is signed with a secret you hold`);
    endpointId = endpoint;
  }
  const policyStreamUrl = body.policy_stream === undefined ? null : webhookUrl("policy_stream", body.policy_stream);
  const common = validateCommon(body, ctx, soak.environment);
  const settings: ThresholdSettings = {
    target: rate, ci, max_episodes: maxEpisodes, monthly_cap_usd: cap as number,
    on_verified_endpoint: endpointId, on_verified_url: onVerifiedUrl, policy_stream_url: policyStreamUrl,
  };
  return validatedKindRun({
    kind: "threshold", body, units: [soak.unit, verify.unit], seed: common.seed, priority: common.priority,
    episodes: [{ unit: 0, seed: episodeSeed(common.seed, 0), assign: { phase: "soak" } }],
    kindPlan: { threshold: settings },
    kindState: { phase: "soak" } satisfies ThresholdState,
  });
}

function settingsOf(run: Pick<RunRecord, "plan">): ThresholdSettings {
  return run.plan.kind!.threshold as ThresholdSettings;
}

function stateOf(run: Pick<RunRecord, "kindState">): ThresholdState {
  return (run.kindState as ThresholdState | null) ?? { phase: "soak" };
}

/** The unit each phase's episodes run on (`planThreshold`, `thresholdProgress`). */
const PHASE_UNIT = { soak: 0, verify: 1 } as const;

function checkpointFrom(state: ThresholdState): number {
  return state.checkpoints?.at(-1)?.from_index ?? 0;
}

/**
 * POST /v1/runs/{id}/checkpoints: a new policy checkpoint for an iterating threshold run. The next
 * soak episodes run it (and the verify phase too, unless the run has `escalate_policy`), and the
 * soak test starts over from the next episode index. Call inside a transaction; throws a 422 when
 * the run is not iterating.
 */
export async function pushCheckpoint(db: Db, run: RunRecord, policy: Record<string, unknown>, now: Date): Promise<{ from_index: number; checkpoints: number }> {
  const state = stateOf(run);
  if (run.kind !== "threshold" || state.phase !== "soak" || !["queued", "scheduling", "running"].includes(run.status)) {
    contract(`run ${run.id} is not a threshold run iterating on the soak tier (kind ${run.kind}, status ${run.status}, phase ${state.phase}); checkpoints go to an iterating threshold run`);
  }
  if (!settingsOf(run).policy_stream_url) {
    contract(`run ${run.id} declared no policy_stream, so its soak test spends its whole alpha on the submitted policy; submit the run with policy_stream {"webhook": ...} to push checkpoints (their alphas then add up to the run's)`);
  }
  const units = run.units.map((u) => ({ ...u }));
  const request = run.request as { escalate_policy?: unknown };
  units[0].policy = policy;
  if (request.escalate_policy === undefined) units[1].policy = policy;
  const fromIndex = await countEpisodesOfRun(db, run.id);
  state.checkpoints = [...(state.checkpoints ?? []), { at: now.toISOString(), from_index: fromIndex, policy: String(policy.image ?? policy.hf ?? policy.url ?? policy.type) }];
  await setRunUnits(db, run.id, units);
  await setKindState(db, run.id, state);
  return { from_index: fromIndex, checkpoints: state.checkpoints.length };
}

/**
 * The policy being tested on the soak tier (1 = the submitted one, j + 1 after j checkpoints) and
 * its alpha: its share of the run's under `policy_stream`, else the whole of it.
 */
function soakTestOf(settings: ThresholdSettings, state: ThresholdState): { checkpoint: number; alpha: number } {
  const checkpoint = (state.checkpoints?.length ?? 0) + 1;
  const family = 1 - settings.ci;
  return { checkpoint, alpha: settings.policy_stream_url ? checkpointAlpha(family, checkpoint) : family };
}

/** Episodes the sequential test takes per turn of the event loop when it replays a phase (about 0.1 ms each). */
const REPLAY_EPISODES_PER_TURN = 64;

/**
 * The sequential test over one phase's finished episodes, in index order: the model-level test over
 * cells (stats/cell-threshold.ts) under the phase unit's headline prior. Replaying a phase costs about
 * 0.1 ms an episode (1,000 episodes 60 ms, 5,000 0.4 s), so it goes REPLAY_EPISODES_PER_TURN episodes
 * a turn of the event loop; with `replays` (progress, after every episode) it continues the test it
 * left after the previous episode where the evidence it took is unchanged (sequential-replay.ts).
 */
async function testPhase(
  run: Pick<RunRecord, "id" | "units" | "headlinePriors">, settings: ThresholdSettings, state: ThresholdState, episodes: readonly EpisodeRecord[], phase: "soak" | "verify", replays?: ReplayMemo,
) {
  const fromIndex = phase === "soak" ? checkpointFrom(state) : 0;
  const alpha = phase === "soak" ? soakTestOf(settings, state).alpha : 1 - settings.ci;
  const unit = run.units[phase === "soak" ? 0 : 1];
  const prior = headlinePriorOfUnit(run, unit);
  // Soak evidence counts only episodes of the current checkpoint.
  const steps = episodes
    .filter((e) => e.status === "done" && e.assign.phase === phase && !(phase === "soak" && e.idx < fromIndex))
    .map((e) => {
      const step = { success: policySucceeded(e), cell: e.cellId ?? "unknown" };
      return { signature: `${e.id} ${step.success} ${step.cell}`, step };
    });
  const create = () => {
    const test = createCellThresholdTest({ target: settings.target, alpha, maxEpisodes: settings.max_episodes, prior });
    return { update: (step: { success: boolean; cell: string }) => test.update(step.success, step.cell), state: () => test.state() };
  };
  // Everything the test is made from: a checkpoint, a new prior or new settings start another.
  const key = JSON.stringify([run.id, phase, fromIndex, alpha, settings.target, settings.max_episodes, prior]);
  const { test, decision } = await replaySequential(steps, create, { memo: replays, key, perTurn: REPLAY_EPISODES_PER_TURN, continueDecision: "continue" as ThresholdDecision });
  return { decision, state: test.state() };
}

/**
 * Metered cost of the run's attempts in the UTC month of `now`: each unit's meters, as its Result
 * prices them (the same numbers), without the rest of a Result (its posterior intervals cost
 * milliseconds each, after every episode of the run).
 */
function costThisMonth(ctx: Pick<KindResultContext, "pins">, run: RunRecord, episodes: readonly EpisodeRecord[], now: Date): number {
  const month = now.toISOString().slice(0, 7);
  const inMonth = episodes.filter((e) => (e.finishedAt ?? e.assignedAt ?? "").slice(0, 7) === month);
  return run.units.reduce((sum, unit, index) => sum + computeMeters(inMonth.filter((e) => e.unit === index), unitMeterContext(ctx.pins, unit, run.priority)).costUsd, 0);
}

/**
 * After an episode finished (inside the lifecycle's transaction): decides the phase, adds the next
 * episode, emits events. Asks the lifecycle to stop the run at the monthly cap. Reads the current
 * test's episodes (at most `max_episodes`), and the month's to price the next, not the whole run.
 */
async function thresholdProgress(ctx: KindProgressContext, run: RunRecord): Promise<KindDecision> {
  const { tx, now } = ctx;
  const settings = settingsOf(run);
  const state = stateOf(run);
  if (state.phase !== "soak" && state.phase !== "verify") return undefined;
  if (await hasOpenEpisodes(tx, run.id)) return undefined;
  const units = run.units;
  const phase = state.phase;
  // The evidence `testPhase` counts, and only it: the done episodes of the phase's unit since its checkpoint.
  const evidence = await listDoneEpisodesOfPhase(tx, run.id, PHASE_UNIT[phase], phase, phase === "soak" ? checkpointFrom(state) : 0);
  const { decision, state: test } = await testPhase(run, settings, state, evidence, phase, ctx.replays);
  const pins = run.resolvedPins;
  let next: "soak" | "verify" | undefined;
  if (phase === "soak") {
    if (decision === "continue") next = "soak";
    else if (decision === "pass") {
      const { checkpoint, alpha } = soakTestOf(settings, state);
      state.phase = "verify";
      state.crossed = { n: test.n, successes: test.successes, at: now.toISOString(), checkpoint, alpha };
      await enqueueEvent(tx, run.accountId, "threshold.crossed", {
        run_id: run.id, phase: "soak", robot: units[0].robot, task: pins.task, target: { success_rate: settings.target, ci: settings.ci },
        ...rateSummary(test.successes, test.n), escalate_to: units[1].robot,
        // The error this crossing carries: the checkpoint's alpha, a share of the run's under policy_stream.
        checkpoint, alpha, family_alpha: 1 - settings.ci, reason: test.reason,
      }, now);
      next = "verify";
    } else state.phase = decision === "inconclusive" ? "inconclusive" : "not_met";
  } else if (decision === "continue") next = "verify";
  else if (decision === "pass") {
    state.phase = "verified";
    state.decided = { n: test.n, successes: test.successes, at: now.toISOString() };
    if (settings.on_verified_endpoint) state.event_id = await deliverOnVerified(tx, run, settings, settings.on_verified_endpoint, units[1].robot, pins.task, test.successes, test.n, now);
  } else {
    state.phase = decision === "inconclusive" ? "inconclusive" : "not_confirmed";
    state.decided = { n: test.n, successes: test.successes, at: now.toISOString() };
  }
  if (next) {
    const unit = next === "soak" ? 0 : 1;
    const estimate = costOfSecondsUsd(episodeEstimateS(run.plan), unitMeterContext(ctx.pins, units[unit], run.priority));
    const spent = costThisMonth(ctx, run, await listEpisodeRecordsOfMonth(tx, run.id, now.toISOString().slice(0, 7)), now);
    if (spent + estimate > settings.monthly_cap_usd) {
      await setKindState(tx, run.id, state);
      return {
        stop: {
          code: "monthly_budget_exceeded",
          message: `threshold run ${run.id} stopped at its monthly_cap_usd ${settings.monthly_cap_usd}: $${spent.toFixed(2)} spent this month and the next ${next} episode may cost $${estimate.toFixed(2)}`,
        },
      };
    }
    const count = await countEpisodesOfRun(tx, run.id);
    await appendEpisodes(tx, run.id, [{ unit, seed: episodeSeed(run.plan.seed, count), assign: { phase: next } }], count);
  }
  await setKindState(tx, run.id, state);
  return undefined;
}

/** Queues the signed POST to on_verified.webhook: an event delivered to that endpoint only. */
async function deliverOnVerified(db: Db, run: RunRecord, settings: ThresholdSettings, endpointId: string, robot: string, task: string, k: number, n: number, now: Date): Promise<string> {
  const data = { run_id: run.id, phase: "verified", robot, task, target: { success_rate: settings.target, ci: settings.ci }, ...rateSummary(k, n) };
  return await enqueueEventForEndpoint(db, run.accountId, endpointId, "threshold.crossed", data, now);
}

async function thresholdResult(ctx: KindResultContext, run: RunRecord, episodes: readonly EpisodeRecord[]): Promise<Record<string, unknown>> {
  const units = await unitResults(ctx, run, episodes);
  const settings = settingsOf(run);
  const state = stateOf(run);
  const phaseView = async (phase: "soak" | "verify") => {
    const { decision, state: test } = await testPhase(run, settings, state, episodes, phase);
    return { ...test, decision };
  };
  const soak = await phaseView("soak");
  const verify = await phaseView("verify");
  const soakTest = soakTestOf(settings, state);
  // The episodes behind the verdict: the verify tier once it has begun, else the current checkpoint's soak episodes.
  const verifying = episodes.some((e) => e.assign.phase === "verify");
  const from = checkpointFrom(state);
  const population = verifying
    ? { units: [1], description: `the verify phase on ${units[1].robot}: fresh episodes of the checkpoint that crossed on the soak tier` }
    : {
        units: [0], include: (e: EpisodeRecord) => e.idx >= from,
        description: `the soak phase on ${units[0].robot} since episode ${from} (the current checkpoint); the verify tier has not begun`,
      };
  return {
    ...(await headlineResult(ctx, run, episodes, units, population)),
    units,
    threshold: {
      target: { success_rate: settings.target, ci: settings.ci, task: run.resolvedPins.task },
      verdict: state.phase,
      error_control: {
        family_alpha: 1 - settings.ci,
        soak_checkpoint: soakTest.checkpoint,
        soak_alpha: soakTest.alpha,
        verify_alpha: 1 - settings.ci,
        rule: settings.policy_stream_url
          ? "policy_stream: checkpoint j is tested at family_alpha x 6/(pi^2 j^2), so any checkpoint crosses falsely with probability <= family_alpha"
          : "no policy_stream: the submitted policy is tested at family_alpha and no checkpoints are taken",
      },
      soak,
      verify,
      crossed: state.crossed ?? null,
      checkpoints: state.checkpoints ?? [],
      on_verified: settings.on_verified_url ? { webhook: settings.on_verified_url, event_id: state.event_id ?? null } : null,
      monthly_cap_usd: settings.monthly_cap_usd,
    },
  };
}

/** The body of a POST /v1/runs of this kind: its shape, declared once (checked before `plan`). */
const schema = z.strictObject({
  kind: z.literal("threshold"),
  iterate_on: robotPin.describe("soak-tier robot pin to iterate on"),
  escalate_to: robotPin.describe("verify-tier robot pin for confirmation"),
  target: z.strictObject({
    success_rate: z.number().gt(0).lt(1),
    ci: z.number().gt(0).lt(1).optional().describe("default 0.95"),
    task: taskRef,
  }),
  policy: Policy, escalate_policy: Policy.optional(), environment: environmentRef,
  monthly_cap_usd: z.number().positive(),
  policy_stream: WebhookTarget.optional(), on_verified: WebhookTarget.optional(),
  episodes: EpisodesSpec.optional().describe("maximum episodes per phase"),
  ...COMMON_RUN_FIELDS,
}).describe("kind threshold: iterate on the soak tier until the target is met, then confirm on the verify tier");

export const thresholdKind: RunKind = {
  name: "threshold",
  traits: { hasUnits: true, comparesPolicies: false, leaderboard: null, paperRows: "headline", unitHeading: "Run", acceptsCheckpoints: true, replayable: false },
  schema, plan: planThreshold, result: thresholdResult, progress: thresholdProgress,
  // Episodes are made one at a time until the test decides: a quote prices the most a unit can make.
  episodeCeilingPerUnit: (plan) => (plan.kind?.threshold as Partial<ThresholdSettings> | undefined)?.max_episodes,
};
