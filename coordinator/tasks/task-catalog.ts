/**
 * Task fixtures shipped with the coordinator: seeded into the store as published, frozen revisions
 * owned by the service's catalogue account `acct_assay`, signed by that account's key and the
 * service's key like any frozen task.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureAccount } from "../store/accounts-repo.js";
import type { Db } from "../store/database.js";
import { adoptTaskRow, getTask, insertTask } from "../store/tasks-repo.js";
import { signFrozenSpec } from "./task-lifecycle.js";
import { storedSpec } from "./task-view.js";
import { lockName } from "../store/named-lock.js";
import { transact } from "../store/tx.js";

const here = join(dirname(fileURLToPath(import.meta.url)), "../catalog");

/** The account that owns the service's own catalogue tasks. */
export const CATALOG_ACCOUNT_ID = "acct_assay";

interface Fixture {
  id: string;
  file: string;
  version: number;
}

const FIXTURES: readonly Fixture[] = [{ id: "task_pick-cube-v1", file: "tasks/pick-cube-v1.json", version: 1 }];

/**
 * Inserts each fixture (e.g. pick-cube@v1) when absent, signed. A fixture stored by an older
 * coordinator without an owner or signatures is adopted by `acct_assay` and signed. Returns the ids
 * inserted.
 */
export async function seedTasks(db: Db, now: Date = new Date()): Promise<string[]> {
  const inserted: string[] = [];
  await transact(db, async (tx) => {
    await lockName(tx, "bootstrap:catalogue-tasks");
    await ensureAccount(tx, CATALOG_ACCOUNT_ID, "Assay catalogue", now.toISOString());
    for (const fixture of FIXTURES) {
      const existing = await getTask(tx, fixture.id);
      if (existing) {
        if (existing.account_id === null || existing.signatures.length === 0) {
          const frozen = existing.frozen ?? now.toISOString();
          const signatures = await signFrozenSpec(tx, CATALOG_ACCOUNT_ID, storedSpec(existing), `${existing.name}@v${fixture.version}`, frozen, now);
          await adoptTaskRow(tx, fixture.id, { accountId: CATALOG_ACCOUNT_ID, signatures: JSON.stringify(signatures), frozen });
        }
        continue;
      }
      const raw = JSON.parse(readFileSync(join(here, fixture.file), "utf8")) as { name: string };
      const row = {
        id: fixture.id,
        account_id: CATALOG_ACCOUNT_ID,
        name: raw.name,
        version: fixture.version,
        status: "frozen" as const,
        visibility: "published" as const,
        created: now.toISOString(),
        frozen: now.toISOString(),
        spec: JSON.stringify(raw),
        signatures: "[]",
        pilot: null,
      };
      const signatures = await signFrozenSpec(tx, CATALOG_ACCOUNT_ID, storedSpec({ ...row, spec: raw as unknown as Record<string, unknown> }), `${row.name}@v${row.version}`, row.frozen, now);
      await insertTask(tx, { ...row, signatures: JSON.stringify(signatures) });
      inserted.push(fixture.id);
    }
  });
  return inserted;
}
