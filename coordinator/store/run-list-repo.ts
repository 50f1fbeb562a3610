/**
 * The runs list (GET /v1/runs) and a run's labels: the account's runs newest first, filtered by
 * kind, status, task, robot, policy name and metadata, paged by `starting_after`; and the update of
 * a run's name and metadata. The filters beyond kind and status read `run_facets` and
 * `run_metadata` (coordinator/store/run-facets.ts), each through its (account, facet or key, value)
 * index, so a filter never parses the account's runs.
 */
import type { Db } from "./database.js";
import { writeRunMetadataRows } from "./run-facets.js";
import { runRecordOf, type RunRecord, type RunRow } from "./runs-repo.js";

export interface ListRunsQuery {
  accountId: string;
  kind?: string;
  status?: string;
  /** A task name (any revision) or revision `<name>@v<N>`. */
  task?: string;
  /** A robot model (any firmware) or pin `<model>@<firmware>`. */
  robot?: string;
  /** The name a policy is shown under (policy_name, a compare's policy name, else image or hf). */
  policy?: string;
  /** Every key must have exactly this value. */
  metadata?: Record<string, string>;
  limit: number;
  /** Cursor: only runs listed after this run id (older ones). */
  before?: string;
}

/** The account's runs matching every filter given, newest first (created, then id, descending). */
export async function listRuns(db: Db, query: ListRunsQuery): Promise<RunRecord[]> {
  const where = ["account_id = @accountId"];
  const params: Record<string, unknown> = { accountId: query.accountId, limit: query.limit };
  if (query.kind) {
    where.push("kind = @kind");
    params.kind = query.kind;
  }
  if (query.status) {
    where.push("status = @status");
    params.status = query.status;
  }
  for (const facet of ["task", "robot", "policy"] as const) {
    const value = query[facet];
    if (value === undefined) continue;
    where.push(`id IN (SELECT run_id FROM run_facets WHERE account_id = @accountId AND facet = '${facet}' AND value = @${facet})`);
    params[facet] = value;
  }
  Object.entries(query.metadata ?? {}).forEach(([key, value], i) => {
    where.push(`id IN (SELECT run_id FROM run_metadata WHERE account_id = @accountId AND key = @metaKey${i} AND value = @metaValue${i})`);
    params[`metaKey${i}`] = key;
    params[`metaValue${i}`] = value;
  });
  if (query.before) {
    where.push(`(created, id) < (SELECT created, id FROM runs WHERE id = @before AND account_id = @accountId)`);
    params.before = query.before;
  }
  return (await db
    .prepare(`SELECT * FROM runs WHERE ${where.join(" AND ")} ORDER BY created DESC, id DESC LIMIT @limit`)
    .all(params))
    .map((row) => runRecordOf(row as RunRow));
}

/** Sets a run's name (null: none) and its whole metadata, with the rows the list filters on. */
export async function setRunLabels(db: Db, run: { id: string; accountId: string }, labels: { name: string | null; metadata: Record<string, string> }): Promise<void> {
  await db.transaction(async (db) => {
    await db.prepare("UPDATE runs SET name = ?, metadata = ? WHERE id = ?").run(
      labels.name, Object.keys(labels.metadata).length > 0 ? JSON.stringify(labels.metadata) : null, run.id,
    );
    await writeRunMetadataRows(db, run.id, run.accountId, labels.metadata);
  });
}
