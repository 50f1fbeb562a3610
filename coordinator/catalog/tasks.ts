/** Task fixtures shipped with the coordinator: seeded into the store as published, frozen revisions. */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Db } from "../store/database.js";
import { findVisibleFrozenRevision, insertTask } from "../store/tasks-repo.js";

const here = dirname(fileURLToPath(import.meta.url));

interface Fixture {
  id: string;
  file: string;
  version: number;
}

const FIXTURES: readonly Fixture[] = [{ id: "task_pick-cube-v1", file: "tasks/pick-cube-v1.json", version: 1 }];

/**
 * Inserts each fixture (e.g. pick-cube@v1: frozen, published, no owning account) when absent.
 * Signatures stay empty until signing lands. Returns the ids inserted.
 */
export function seedTasks(db: Db, now: Date = new Date()): string[] {
  const inserted: string[] = [];
  db.transaction(() => {
    for (const fixture of FIXTURES) {
      const spec = JSON.parse(readFileSync(join(here, fixture.file), "utf8")) as { name: string; visibility: "published" | "private" };
      if (findVisibleFrozenRevision(db, "", spec.name, fixture.version)) continue;
      insertTask(db, {
        id: fixture.id,
        account_id: null,
        name: spec.name,
        version: fixture.version,
        status: "frozen",
        visibility: "published",
        created: now.toISOString(),
        frozen: now.toISOString(),
        spec: JSON.stringify(spec),
        signatures: "[]",
        pilot: null,
      });
      inserted.push(fixture.id);
    }
  })();
  return inserted;
}
