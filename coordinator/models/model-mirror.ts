/**
 * The operator's local model mirror (option `modelMirror`, env ASSAY_MODEL_MIRROR): a directory a
 * lab fills from a model hub out of band, laid out as `<mirror>/<org>/<name>/<revision>/model.onnx`
 * (`<mirror>/<org>/<name>/model.onnx` also serves revision `main`). The first run of an account
 * that names a mirrored model copies it into the account's models (source `mirror`), hashed and
 * described like an upload, so later changes to the mirror never change what a run used.
 */
import { createHash } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { pipeline, Transform } from "node:stream";
import { join } from "node:path";
import { randomBase62 } from "../auth/api-keys.js";
import { describeOnnxStream } from "../../protocol/policy/onnx/model-description.js";
import { contract } from "../runs/field-checks.js";
import type { ObjectStore } from "../storage/object-store.js";
import type { Db } from "../store/database.js";
import { findLiveModel, getModel, insertModel, markModelReady, markModelReceived, type ModelRow } from "../store/models-repo.js";
import { MODEL_CONTENT_TYPE, modelKey, removeModelFiles } from "./model-files.js";
import { DEFAULT_REVISION, refText } from "../runs/model-ref.js";
import { DEFAULT_MODEL_RETENTION } from "./model-uploads.js";
import { lockName } from "../store/named-lock.js";
import { transact } from "../store/tx.js";

/** The mirror's file for a model, or undefined. */
export function mirrorFileOf(mirror: string | undefined, name: string, revision: string): string | undefined {
  if (!mirror) return undefined;
  const candidates = [join(mirror, name, revision, "model.onnx")];
  if (revision === DEFAULT_REVISION) candidates.push(join(mirror, name, "model.onnx"));
  return candidates.find((path) => existsSync(path));
}

/** Copies a mirrored model into the account's models and returns the ready row. */
export async function importMirroredModel(db: Db, objects: ObjectStore, accountId: string, name: string, revision: string, file: string, now: () => Date): Promise<ModelRow> {
  // Two submissions may import the same model at once: the second finds the first's row.
  const existing = await findLiveModel(db, accountId, name, revision);
  if (existing?.status === "ready") return existing;
  const id = `mdl_${randomBase62(20)}`;
  // Streamed once into the store and hashed on the way, then described from the stored object: the
  // bytes hashed, described and kept are the same whatever the mirror does meanwhile, and no file
  // is held whole in memory.
  const hash = createHash("sha256");
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  try {
    await objects.put(modelKey(id), pipeline(createReadStream(file), tap, () => undefined), { contentType: MODEL_CONTENT_TYPE });
    let description: unknown;
    try {
      description = await describeOnnxStream((await objects.get(modelKey(id))).body, bytes);
    } catch (error) {
      contract(`policy.hf: the mirror's ${refText(name, revision)} is not a usable ONNX model: ${(error as Error).message}`);
    }
    const sha256 = hash.digest("hex");
    // Checked again under a lock on the name: another submission (here or on another coordinator)
    // may have imported it while these bytes were stored.
    const again = await transact(db, async (tx) => {
      await lockName(tx, `mirrored-model:${accountId}:${name}:${revision}`);
      const raced = await findLiveModel(tx, accountId, name, revision);
      if (raced?.status === "ready") return raced;
      await insertModel(tx, {
        id, account_id: accountId, name, revision, format: "onnx", source: "mirror", created: now().toISOString(), bytes, sha256, retention: DEFAULT_MODEL_RETENTION,
      });
      await markModelReceived(tx, id);
      await markModelReady(tx, id, description, now().toISOString());
      return undefined;
    });
    if (again) {
      await removeModelFiles(objects, id);
      return again;
    }
    return (await getModel(db, id))!;
  } catch (error) {
    await removeModelFiles(objects, id);
    throw error;
  }
}
