/**
 * Kind `eval`: a frozen suite (coordinator/catalog/suites.json) over `robots` with one policy.
 *
 * Plan. Every robot x suite task is a unit, in the task's environment, with the suite's episode
 * count and perturbation schedule; episode i of a task uses `episodeSeed(<suite task seed>, i)`, so
 * every eval of a suite revision faces the same initial conditions (the point of a frozen suite).
 * `perturbation` may not be given (the suite fixes it); `publish: "leaderboard"` needs the
 * account's opt-in (403 publish_forbidden).
 *
 * Result. `units` per robot x task, `suite` (the id), and `scores`: per robot, the pooled success
 * rate over the suite's tasks with its Wilson interval (the suite's scoring rule).
 */
import { nextTurn } from "../async/next-turn.js";
import { AssayError } from "../errors/assay-error.js";
import { policyRate } from "../runs/result-summary.js";
import { headlinePriorOfUnit } from "../runs/headline-priors.js";
import { contract, fail, q } from "../runs/field-checks.js";
import { type ValidatedRun, type ValidateRunContext } from "../runs/run-request.js";
import { episodeSeed, type NewEpisode, type RunRecord } from "../store/runs-repo.js";
import { findSuite, loadSuites, suiteId } from "../suites/suites.js";
import { resolveTask } from "../runs/pin-resolution.js";
import { validateCommon } from "../runs/common-fields.js";
import { resolveUnit, stringList, validatedKindRun, type ResolvedUnit } from "./kind-common.js";
import { decideChecksOfRun } from "./gates.js";
import type { KindResultContext, RunKind } from "./kind.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import { headlineResult, unitResults } from "./unit-results.js";
import { z } from "zod";
import { COMMON_RUN_FIELDS, Policy, PolicyName, robotPin } from "../runs/run-schemas.js";
import { REF_MAX_CHARS, ROBOTS_MAX, tooLong, tooMany } from "../json/field-bounds.js";


async function planEval(body: Record<string, unknown>, ctx: ValidateRunContext): Promise<ValidatedRun> {
  const suite = findSuite(body.suite as string);
  if (!suite) {
    throw new AssayError("not_found", `no suite ${q(body.suite)}; known: ${loadSuites().map(suiteId).join(", ")} (GET /v1/suites)`);
  }
  const robots = stringList("robots", body.robots, "firmware_pin_unavailable");
  const units: ResolvedUnit[] = [];
  for (const robot of robots) {
    for (const entry of suite.tasks) {
      const task = await resolveTask(ctx, entry.task);
      const resolved = await resolveUnit(ctx, { robot, environment: entry.environment, task, policy: body.policy, where: `${robot} on ${entry.task} in ${entry.environment}` });
      resolved.unit.key = `${resolved.unit.robot}/${entry.task}/${entry.environment}`;
      resolved.unit.perturbation = entry.perturbation;
      units.push(resolved);
    }
  }
  const keys = units.map((u) => u.unit.key);
  if (new Set(keys).size !== keys.length) fail("contract_validation_failed", `robots resolve to the same pin twice (${keys.join(", ")}); list each pin once`);
  const common = validateCommon(body, ctx, units[0].environment);
  const episodes: NewEpisode[] = [];
  const longest = Math.max(...suite.tasks.map((t) => t.episodes));
  for (let i = 0; i < longest; i++) {
    units.forEach((u, unit) => {
      const entry = suite.tasks[unit % suite.tasks.length];
      if (i < entry.episodes) episodes.push({ unit, seed: episodeSeed(entry.perturbation.seed, i), assign: null });
    });
  }
  return validatedKindRun({
    kind: "eval", body, units: units.map((u) => u.unit), episodes, seed: suite.tasks[0].perturbation.seed, priority: common.priority,
    kindPlan: { eval: { suite: suiteId(suite) } },
  });
}

async function evalResult(ctx: KindResultContext, run: RunRecord, episodes: readonly EpisodeRecord[]): Promise<Record<string, unknown>> {
  const units = await unitResults(ctx, run, episodes);
  const suite = (run.plan.kind?.eval as { suite: string } | undefined)?.suite ?? null;
  const robots = [...new Set(units.map((u) => u.robot))];
  const unitsOf = (robot: string) => units.flatMap((u, index) => (u.robot === robot ? [index] : []));
  // A posterior interval per robot, each in a turn of its own (as the units', unit-results.ts).
  const scores = [];
  for (const robot of robots) {
    await nextTurn();
    const mine = new Set(unitsOf(robot));
    const done = episodes.filter((e) => e.status === "done" && mine.has(e.unit));
    scores.push({ robot, tasks: mine.size, ...policyRate(done, headlinePriorOfUnit(run, run.units[unitsOf(robot)[0]])).rate });
  }
  const population = {
    units: unitsOf(robots[0]),
    description: robots.length === 1
      ? `the suite score of ${robots[0]}: its episodes over the suite's tasks (the suite's scoring rule)`
      : `the suite score of ${robots[0]}, the first of robots: its episodes over the suite's tasks; each robot's score is in scores[] and robots are not pooled`,
  };
  return { ...(await headlineResult(ctx, run, episodes, units, population)), units, suite, scores };
}

/** The body of a POST /v1/runs of this kind: its shape, declared once (checked before `plan`). */
const schema = z.strictObject({
  kind: z.literal("eval"), suite: z.string().max(REF_MAX_CHARS, tooLong(REF_MAX_CHARS)).describe("suite id <name>@<version> (GET /v1/suites)"), robots: z.array(robotPin).min(1).max(ROBOTS_MAX, tooMany(ROBOTS_MAX)), policy: Policy, policy_name: PolicyName.optional(),
  ...COMMON_RUN_FIELDS, perturbation: z.never({ error: "must be absent for kind \"eval\": the suite fixes its perturbation schedule (GET /v1/suites)" }).optional()
    .describe("not allowed: the suite fixes its perturbation schedule"),
}).describe("kind eval: a frozen benchmark suite on each listed robot pin");

export const evalKind: RunKind = {
  name: "eval",
  traits: { hasUnits: true, comparesPolicies: false, leaderboard: "suite", paperRows: "scores", unitHeading: "Robot", acceptsCheckpoints: false, replayable: false },
  schema,
  plan: planEval,
  result: evalResult,
  // An eval may back CI gate checks; they are decided when the run ends, whatever its ending.
  onEnded: (ctx, run) => decideChecksOfRun(ctx.tx, run.id, ctx.now),
};
