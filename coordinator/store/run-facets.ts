/**
 * What the runs list filters on besides kind and status, written when a run is inserted:
 * `run_facets` rows (task name and revision, robot model and pin, the policy name the list shows,
 * for every unit) and `run_metadata` rows (one per metadata key). The migration that made the
 * tables filled `run_facets` for the runs stored before them the same way (migrations.ts).
 */
import type { RunUnit } from "../domain/units.js";
import { shownPolicyName } from "../domain/policy-name.js";
import type { Db } from "./database.js";

export type RunFacet = "task" | "robot" | "policy";

/** The values a run is found under, per facet: `pick-cube` and `pick-cube@v2`, `so101` and `so101@3.11`, its policies' shown names. */
export function runFacets(units: readonly Pick<RunUnit, "task" | "robot" | "model" | "policy" | "policy_name">[], request: Record<string, unknown>): Array<[RunFacet, string]> {
  const out = new Map<string, [RunFacet, string]>();
  const add = (facet: RunFacet, value: string | undefined) => {
    if (value) out.set(`${facet}\u0000${value}`, [facet, value]);
  };
  for (const unit of units) {
    add("task", unit.task);
    const at = unit.task.indexOf("@v");
    if (at > 0) add("task", unit.task.slice(0, at));
    add("robot", unit.robot);
    add("robot", unit.model);
    add("policy", shownPolicyName(unit.policy, unit.policy_name ?? request.policy_name));
  }
  return [...out.values()];
}

/** Inserts a new run's facets and metadata rows (call inside the insert's transaction). */
export async function insertRunIndex(db: Db, run: { id: string; accountId: string; facets: ReadonlyArray<[RunFacet, string]>; metadata: Record<string, string> }): Promise<void> {
  await addRunFacets(db, run.id, run.accountId, run.facets);
  await writeRunMetadataRows(db, run.id, run.accountId, run.metadata);
}

/** Adds facets to a run (those it has already are kept: a run is found under every policy it ran). */
export async function addRunFacets(db: Db, runId: string, accountId: string, facets: ReadonlyArray<[RunFacet, string]>): Promise<void> {
  const facet = db.prepare("INSERT INTO run_facets (run_id, account_id, facet, value) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING");
  for (const [name, value] of facets) await facet.run(runId, accountId, name, value);
}

/** Replaces a run's `run_metadata` rows with `metadata` (call inside a transaction). */
export async function writeRunMetadataRows(db: Db, runId: string, accountId: string, metadata: Record<string, string>): Promise<void> {
  await db.prepare("DELETE FROM run_metadata WHERE run_id = ?").run(runId);
  const insert = db.prepare("INSERT INTO run_metadata (run_id, account_id, key, value) VALUES (?, ?, ?, ?)");
  for (const [key, value] of Object.entries(metadata)) await insert.run(runId, accountId, key, value);
}
