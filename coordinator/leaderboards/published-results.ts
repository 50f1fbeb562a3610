/**
 * What leaderboards are made of: completed runs submitted with `publish: "leaderboard"` by an
 * account that is opted in now (opting out hides its entries at once), whose recordings were not
 * purged (a purged run leaves its board), split into results per board.
 *
 * A board pins everything that makes results comparable, and results that differ in any of it
 * never share one:
 * - suite boards (kind eval): the frozen suite revision, the robot pin (model@firmware), and with
 *   them the suite's tasks, environments and perturbation schedules;
 * - task boards (kinds run and compare): the frozen task revision, which must be published, the
 *   robot pin, the environment, the perturbation revision and the run's perturbation settings, and
 *   the instruction set (sampled or held-out).
 * The board id is a hash of that key, so the same pins always name the same board.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../json/canonical-json.js";
import { policySucceeded } from "../runs/policy-outcome.js";
import type { Db } from "../store/database.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import { readEpisodeRecords } from "../runs/episode-records.js";
import { runRecordOf, type RunRecord, type RunRow } from "../store/runs-repo.js";
import { listPublishedRunRows } from "../store/published-runs-repo.js";
import { isPublishedTaskRevision } from "../store/tasks-repo.js";
import { headlinePriorOfUnit } from "../runs/headline-priors.js";
import type { HeadlinePrior } from "../stats/beta-binomial-rate.js";
import { shownPolicyName } from "../domain/policy-name.js";
import { kindModule } from "../kinds/registry.js";

export interface BoardPins {
  kind: "suite" | "task";
  /** The suite id (`tabletop-basics@1`) or the task revision (`pick-cube@v1`). */
  subject: string;
  robot: string;
  /** Task boards: the environment; suite boards: null (the suite fixes its tasks' environments). */
  environment: string | null;
  perturbation_rev: string;
  /** Task boards: the run's perturbation settings as submitted (null: none); suite boards: null (the suite's). */
  perturbation: Record<string, unknown> | null;
  instructions: string;
}

export interface PublishedCounts {
  k: number;
  n: number;
  /** Per cell, for the interval across cells. */
  clusters: Array<{ cell: string; k: number; n: number }>;
}

/** One policy's published result on one board. */
export interface PublishedResult {
  board: BoardPins;
  boardId: string;
  runId: string;
  kind: string;
  accountId: string;
  accountName: string;
  policyName: string;
  completed: string;
  counts: PublishedCounts;
  /** The prior the run recorded for this result's headline (fixed at submission), which its ranking uses. */
  prior: HeadlinePrior;
  /** Suite boards: per task revision. */
  tasks: Array<{ task: string; environment: string } & PublishedCounts>;
}

/** The outcomes of one paired compare on a task board: per pair, each policy's success. */
export interface PublishedPairs {
  boardId: string;
  runId: string;
  policies: [string, string];
  pairs: Array<[boolean, boolean]>;
}

export function boardIdOf(pins: BoardPins): string {
  return `lb_${createHash("sha256").update(canonicalJson(pins)).digest("hex").slice(0, 20)}`;
}

/** The published name of a policy: `policy_name`, else the image, the checkpoint's hf, or a plain label. */
export function publishedPolicyName(policy: Record<string, unknown>, given: unknown): string {
  return shownPolicyName(policy, given);
}

function countsOf(episodes: readonly EpisodeRecord[]): PublishedCounts {
  const byCell = new Map<string, { k: number; n: number }>();
  let k = 0;
  for (const e of episodes) {
    const success = policySucceeded(e);
    if (success) k++;
    const cell = byCell.get(e.cellId ?? "?") ?? { k: 0, n: 0 };
    cell.n++;
    if (success) cell.k++;
    byCell.set(e.cellId ?? "?", cell);
  }
  return { k, n: episodes.length, clusters: [...byCell].map(([cell, c]) => ({ cell, ...c })).sort((a, b) => a.cell.localeCompare(b.cell)) };
}

/** Whether a task revision is a published frozen task (only those have public boards). */
async function publishedTask(db: Db, rev: string): Promise<boolean> {
  const match = /^(.+)@v(\d+)$/.exec(rev);
  if (!match) return false;
  return await isPublishedTaskRevision(db, match[1], Number(match[2]));
}

/** The published runs, newest first, with their account's display name. */
async function publishedRuns(db: Db): Promise<Array<{ run: RunRecord; accountName: string }>> {
  const rows = await listPublishedRunRows(db);
  // An account without a display name (possible only for rows older than the opt-in rule) is never
  // shown by its internal id: it is numbered within this list instead.
  const unnamed = new Map<string, string>();
  const nameOf = (row: RunRow & { account_name: string | null }): string => {
    if (row.account_name !== null) return row.account_name;
    if (!unnamed.has(row.account_id)) unnamed.set(row.account_id, `unnamed account ${unnamed.size + 1}`);
    return unnamed.get(row.account_id)!;
  };
  return rows.map((row) => ({ run: runRecordOf(row), accountName: nameOf(row) }));
}

/** Every published result and paired compare, by board. */
export async function collectPublished(db: Db): Promise<{ results: PublishedResult[]; pairs: PublishedPairs[] }> {
  const results: PublishedResult[] = [];
  const pairs: PublishedPairs[] = [];
  for (const { run, accountName } of await publishedRuns(db)) {
    const done = (await readEpisodeRecords(db, run.id)).filter((e) => e.status === "done" && e.outcome !== null);
    const request = run.request as Record<string, unknown>;
    const instructions = typeof request.instructions === "string" ? request.instructions : "sampled";
    const base = { runId: run.id, kind: run.kind, accountId: run.accountId, accountName, completed: run.completed ?? run.created };
    const traits = kindModule(run.kind).traits;
    if (traits.leaderboard === "suite") {
      const suite = (run.plan.kind?.eval as { suite?: string } | undefined)?.suite;
      if (!suite) continue;
      for (const robot of [...new Set(run.units.map((u) => u.robot))]) {
        const board: BoardPins = { kind: "suite", subject: suite, robot, environment: null, perturbation_rev: run.resolvedPins.perturbation_rev, perturbation: null, instructions };
        const units = run.units.flatMap((u, index) => (u.robot === robot ? [{ u, index }] : []));
        const mine = done.filter((e) => units.some(({ index }) => index === e.unit));
        results.push({
          ...base, board, boardId: boardIdOf(board), policyName: publishedPolicyName(run.units[0]!.policy, request.policy_name), counts: countsOf(mine),
          prior: headlinePriorOfUnit(run, units[0]?.u),
          tasks: units.map(({ u, index }) => ({ task: u.task, environment: u.environment, ...countsOf(done.filter((e) => e.unit === index)) })),
        });
      }
    } else if (traits.leaderboard === "task") {
      const unit = run.units[0]!;
      if (!await publishedTask(db, unit.task)) continue;
      const board: BoardPins = {
        kind: "task", subject: unit.task, robot: unit.robot, environment: unit.environment, perturbation_rev: run.resolvedPins.perturbation_rev,
        perturbation: (request.perturbation as Record<string, unknown> | undefined) ?? null, instructions,
      };
      const boardId = boardIdOf(board);
      run.units.forEach((u, index) => {
        const name = traits.comparesPolicies ? publishedPolicyName(u.policy, u.policy_name) : publishedPolicyName(u.policy, request.policy_name);
        results.push({ ...base, board, boardId, policyName: name, counts: countsOf(done.filter((e) => e.unit === index)), prior: headlinePriorOfUnit(run, u), tasks: [] });
      });
      if (traits.comparesPolicies && run.units.length === 2 && request.paired !== false) {
        const byPair = new Map<number, [boolean | undefined, boolean | undefined]>();
        for (const e of done) {
          const pair = e.assign.pair;
          if (typeof pair !== "number") continue;
          const slot = byPair.get(pair) ?? [undefined, undefined];
          slot[e.unit] = policySucceeded(e);
          byPair.set(pair, slot);
        }
        const complete = [...byPair.values()].filter((p): p is [boolean, boolean] => p[0] !== undefined && p[1] !== undefined);
        pairs.push({
          boardId, runId: run.id,
          policies: [publishedPolicyName(run.units[0]!.policy, run.units[0]!.policy_name), publishedPolicyName(run.units[1]!.policy, run.units[1]!.policy_name)],
          pairs: complete,
        });
      }
    }
  }
  return { results, pairs };
}

/** The boards a just-completed run enters (for the leaderboard.entered webhook), without reading every run. */
export async function boardsOfRun(db: Db, run: RunRecord): Promise<string[]> {
  const request = run.request as Record<string, unknown>;
  if (request.publish !== "leaderboard" || run.status !== "completed") return [];
  const instructions = typeof request.instructions === "string" ? request.instructions : "sampled";
  const { leaderboard } = kindModule(run.kind).traits;
  if (leaderboard === "suite") {
    const suite = (run.plan.kind?.eval as { suite?: string } | undefined)?.suite;
    if (!suite) return [];
    return [...new Set(run.units.map((u) => u.robot))].map((robot) =>
      boardIdOf({ kind: "suite", subject: suite, robot, environment: null, perturbation_rev: run.resolvedPins.perturbation_rev, perturbation: null, instructions }));
  }
  if (leaderboard !== "task") return [];
  const unit = run.units[0]!;
  if (!await publishedTask(db, unit.task)) return [];
  return [boardIdOf({
    kind: "task", subject: unit.task, robot: unit.robot, environment: unit.environment, perturbation_rev: run.resolvedPins.perturbation_rev,
    perturbation: (request.perturbation as Record<string, unknown> | undefined) ?? null, instructions,
  })];
}
