/**
 * Models end by request (DELETE /v1/models/{id}) or when they pass their `retention`, counted from
 * when they became ready; an upload left unfinished for 7 days ends too. Neither happens while an
 * unfinished run still needs the model: a delete is refused naming the runs, and the sweep waits
 * for them to end. The retention sweeper (coordinator/data/retention-sweeper.ts) calls the sweep.
 */
import { contract } from "../runs/field-checks.js";
import type { ObjectStore } from "../storage/object-store.js";
import type { Db } from "../store/database.js";
import { endModel, getModel, listLiveModels, unfinishedRunsUsingModel, type ModelRow } from "../store/models-repo.js";
import { removeModelFiles } from "./model-files.js";
import { modelExpiresAt } from "./model-view.js";

const ABANDONED_UPLOAD_MS = 7 * 24 * 3_600_000;

export async function deleteModel(db: Db, objects: ObjectStore, row: ModelRow, now: Date): Promise<ModelRow> {
  if (row.status !== "uploading" && row.status !== "ready") return row;
  const runs = await unfinishedRunsUsingModel(db, row.id);
  if (runs.length > 0) contract(`model ${row.id} is in use by unfinished runs (${runs.join(", ")}); delete it once they have ended, or cancel them`);
  await endModel(db, row.id, "deleted", now.toISOString());
  await removeModelFiles(objects, row.id);
  return (await getModel(db, row.id))!;
}

/** Ends the models past retention (or abandoned uploads) that no unfinished run needs; returns how many. */
export async function sweepModels(db: Db, objects: ObjectStore, now: Date): Promise<number> {
  let ended = 0;
  for (const row of await listLiveModels(db)) {
    const due = row.status === "ready" ? modelExpiresAt(row)!.getTime() : Date.parse(row.created) + ABANDONED_UPLOAD_MS;
    if (due > now.getTime() || (await unfinishedRunsUsingModel(db, row.id)).length > 0) continue;
    if (await endModel(db, row.id, "expired", now.toISOString())) ended++;
    await removeModelFiles(objects, row.id);
  }
  return ended;
}
