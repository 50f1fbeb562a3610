/**
 * The operator's local model mirror (option `modelMirror`, env ASSAY_MODEL_MIRROR): a directory a
 * lab fills from a model hub out of band, laid out as `<mirror>/<org>/<name>/<revision>/model.onnx`
 * (`<mirror>/<org>/<name>/model.onnx` also serves revision `main`). The first run of an account
 * that names a mirrored model copies it into the account's models (source `mirror`), hashed and
 * described like an upload, so later changes to the mirror never change what a run used.
 */
import { copyFile, mkdir, readFile, stat } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { randomBase62 } from "../auth/api-keys.js";
import { describeOnnxModel } from "../../protocol/policy/onnx/model-description.js";
import { contract } from "../runs/field-checks.js";
import type { Db } from "../store/database.js";
import { findLiveModel, getModel, insertModel, markModelReady, markModelReceived, type ModelRow } from "../store/models-repo.js";
import { modelsRoot, partPath, promotePart, removeModelFiles, sha256OfFile } from "./model-files.js";
import { DEFAULT_REVISION, refText } from "./model-ref.js";
import { DEFAULT_MODEL_RETENTION } from "./model-uploads.js";

/** The mirror's file for a model, or undefined. */
export function mirrorFileOf(mirror: string | undefined, name: string, revision: string): string | undefined {
  if (!mirror) return undefined;
  const candidates = [join(mirror, name, revision, "model.onnx")];
  if (revision === DEFAULT_REVISION) candidates.push(join(mirror, name, "model.onnx"));
  return candidates.find((path) => existsSync(path));
}

/** Copies a mirrored model into the account's models and returns the ready row. */
export async function importMirroredModel(db: Db, artifactsDir: string, accountId: string, name: string, revision: string, file: string, now: () => Date): Promise<ModelRow> {
  // Two submissions may import the same model at once: the second finds the first's row.
  const existing = findLiveModel(db, accountId, name, revision);
  if (existing?.status === "ready") return existing;
  const id = `mdl_${randomBase62(20)}`;
  await mkdir(modelsRoot(artifactsDir), { recursive: true });
  await copyFile(file, partPath(artifactsDir, id));
  try {
    const [sha256, { size }] = await Promise.all([sha256OfFile(partPath(artifactsDir, id)), stat(partPath(artifactsDir, id))]);
    let description: unknown;
    try {
      description = describeOnnxModel(await readFile(partPath(artifactsDir, id)));
    } catch (error) {
      contract(`policy.hf: the mirror's ${refText(name, revision)} is not a usable ONNX model: ${(error as Error).message}`);
    }
    const again = findLiveModel(db, accountId, name, revision);
    if (again?.status === "ready") {
      removeModelFiles(artifactsDir, id);
      return again;
    }
    await promotePart(artifactsDir, id);
    db.transaction(() => {
      insertModel(db, {
        id, account_id: accountId, name, revision, format: "onnx", source: "mirror", created: now().toISOString(), bytes: size, sha256, retention: DEFAULT_MODEL_RETENTION,
      });
      markModelReceived(db, id);
      markModelReady(db, id, description, now().toISOString());
    })();
    return getModel(db, id)!;
  } catch (error) {
    removeModelFiles(artifactsDir, id);
    throw error;
  }
}
