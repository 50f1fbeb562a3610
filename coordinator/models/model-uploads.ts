/**
 * Uploading a policy model (docs/api.md, "Models"): POST /v1/models declares the name, format,
 * size and sha256; PUT /v1/models/{id}/content sends the bytes, whole or in chunks with
 * `Content-Range: bytes <first>-<last>/<total>`, each starting where the last one counted
 * (`received_bytes`), so an interrupted upload resumes from there. When the last byte arrives the
 * chunks are streamed into the model's object and hashed on the way, and the stored file is read
 * as an ONNX model by the bounded reader (never whole in memory, never holding the event loop); its
 * declared inputs and outputs are kept for the checks at submission. Only then is it `ready`.
 *
 * Bounds (model-limits.ts): a declaration above the largest file, past the account's quota of model
 * bytes, or beyond its number of uploads in progress is refused before any byte is sent.
 */
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { randomBase62 } from "../auth/api-keys.js";
import { AssayError } from "../errors/assay-error.js";
import { describeOnnxStream } from "../../protocol/policy/onnx/model-description.js";
import { contract, q } from "../runs/field-checks.js";
import { retentionHours } from "../runs/run-request.js";
import type { ObjectStore } from "../storage/object-store.js";
import type { Db } from "../store/database.js";
import {
  accountModelUsage, advanceModelUpload, findLiveModel, getModel, insertModel, markModelFailed, markModelReady, restartModelUpload, type ModelRow,
} from "../store/models-repo.js";
import { lockName } from "../store/named-lock.js";
import { ChunkTooLong, dropChunk, dropChunks, joinedChunks, MODEL_CONTENT_TYPE, modelKey, removeModelFiles, writeChunk } from "./model-files.js";
import { formatBytes, type ModelLimits } from "./model-limits.js";
import { refText } from "../runs/model-ref.js";
import { transact } from "../store/tx.js";

export const DEFAULT_MODEL_RETENTION = "90d";
/** Longest retention a model may ask for. */
const MAX_RETENTION_HOURS = 365 * 24;

export interface NewUpload {
  name: string;
  revision: string;
  format: "onnx";
  bytes: number;
  sha256: string;
  retention?: string;
}

/** Checks a retention such as `90d` or `12h`; 422 naming the field otherwise. */
export function checkModelRetention(value: string): string {
  const hours = retentionHours(value);
  if (hours === undefined || hours < 1 || hours > MAX_RETENTION_HOURS) {
    contract(`retention must be a duration of 1h to 365d written as <n>h or <n>d (e.g. "90d"); got ${q(value)}`);
  }
  return value;
}

export async function createModelUpload(db: Db, accountId: string, body: NewUpload, limits: ModelLimits, now: Date): Promise<ModelRow> {
  if (body.bytes > limits.maxBytes) {
    contract(`bytes: models up to ${limits.maxBytes} bytes (${formatBytes(limits.maxBytes)}) are accepted; got ${body.bytes}. Export a smaller model (fp16 weights, fewer layers)`);
  }
  const retention = checkModelRetention(body.retention ?? DEFAULT_MODEL_RETENTION);
  const id = `mdl_${randomBase62(20)}`;
  // Under a lock on the account: two declarations at once must not both fit the last of the quota.
  await transact(db, async (tx) => {
    await lockName(tx, `models:${accountId}`);
    const existing = await findLiveModel(tx, accountId, body.name, body.revision);
    if (existing) {
      contract(`a model ${refText(body.name, body.revision)} is already ${existing.status} on this account (${existing.id}); delete it first (DELETE /v1/models/${existing.id}) or upload under another revision`);
    }
    const usage = await accountModelUsage(tx, accountId);
    if (usage.pending >= limits.maxPendingUploads) {
      contract(`this account has ${usage.pending} model uploads in progress, the most it may have at once (${limits.maxPendingUploads}); finish or delete one (GET /v1/models lists them) before declaring another`);
    }
    if (usage.bytes + body.bytes > limits.accountQuotaBytes) {
      contract(
        `bytes: this account holds ${usage.bytes} bytes of models (${formatBytes(usage.bytes)}, uploads in progress included) of its ${limits.accountQuotaBytes} (${formatBytes(limits.accountQuotaBytes)}); ` +
          `${body.bytes} more would exceed it. Delete models it no longer needs (DELETE /v1/models/{id})`,
      );
    }
    await insertModel(tx, {
      id, account_id: accountId, name: body.name, revision: body.revision, format: body.format, source: "upload",
      created: now.toISOString(), bytes: body.bytes, sha256: body.sha256.toLowerCase(), retention,
    });
  });
  return (await getModel(db, id))!;
}

/** A `Content-Range: bytes <first>-<last>/<total>` header, or the whole file when absent. */
export function parseContentRange(header: string | undefined, row: ModelRow): { first: number; length: number } {
  if (header === undefined) {
    if (row.received_bytes !== 0) {
      contract(`this upload has received ${row.received_bytes} of ${row.bytes} bytes; send the rest with Content-Range: bytes ${row.received_bytes}-<last>/${row.bytes}`);
    }
    return { first: 0, length: row.bytes };
  }
  const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header.trim());
  if (!match) contract(`Content-Range must read "bytes <first>-<last>/<total>" (e.g. bytes 0-1048575/${row.bytes}); got ${q(header)}`);
  const [first, last, total] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (total !== row.bytes) contract(`Content-Range total ${total} is not the ${row.bytes} bytes this upload declared`);
  if (last < first || last >= total) contract(`Content-Range ${q(header)} is not a range within 0-${total - 1}`);
  if (first !== row.received_bytes) {
    contract(`this upload has received ${row.received_bytes} of ${row.bytes} bytes; the next chunk must start at byte ${row.received_bytes}, not ${first}`);
  }
  return { first, length: last - first + 1 };
}

/** Uploads with a PUT in progress in this process: one writer per upload. */
const writing = new Set<string>();

/**
 * Receives one PUT's body into the upload. Counts it only when it is exactly the range announced;
 * completes the model on its last byte. Returns the row as it now is.
 */
export async function receiveModelChunk(
  db: Db, objects: ObjectStore, row: ModelRow, contentRange: string | undefined, body: Readable, limits: ModelLimits, now: () => Date,
): Promise<ModelRow> {
  if (row.status !== "uploading") contract(`model ${row.id} is ${row.status}; only an upload in progress takes bytes`);
  const { first, length } = parseContentRange(contentRange, row);
  if (length > limits.maxChunkBytes) contract(`a chunk may carry at most ${limits.maxChunkBytes} bytes; this one announces ${length}. Send the file in smaller Content-Range chunks`);
  if (writing.has(row.id)) contract(`another request is sending bytes to model ${row.id} right now; wait for it, then send from received_bytes`);
  writing.add(row.id);
  try {
    let written: number;
    try {
      written = await writeChunk(objects, row.id, first, body, length);
    } catch (error) {
      if (error instanceof ChunkTooLong) contract(`the body is longer than the ${length} bytes its Content-Range announces`);
      throw new AssayError("contract_validation_failed", `the upload of this chunk broke off (${(error as Error).message}); send it again from byte ${first}`);
    }
    if (written !== length) {
      await dropChunk(objects, row.id, first);
      contract(`the body carried ${written} bytes but its range announces ${length}; send bytes ${first}-${first + length - 1} again`);
    }
    if (!await advanceModelUpload(db, row.id, first, first + length)) contract(`model ${row.id} changed while this chunk was written; read it again and send from received_bytes`);
    const advanced = (await getModel(db, row.id))!;
    return advanced.received_bytes === advanced.bytes ? await completeModel(db, objects, advanced, now) : advanced;
  } finally {
    writing.delete(row.id);
  }
}

/**
 * The last byte arrived: stream the chunks into the model's object while hashing them, read the
 * stored file as a model, and make it ready, or say why not.
 */
async function completeModel(db: Db, objects: ObjectStore, row: ModelRow, now: () => Date): Promise<ModelRow> {
  const startOver = async (why: string): Promise<never> => {
    await restartModelUpload(db, row.id);
    await objects.delete(modelKey(row.id));
    await dropChunks(objects, row.id);
    contract(`${why}; the upload starts over from byte 0`);
  };
  const hash = createHash("sha256");
  try {
    await objects.put(modelKey(row.id), Readable.from(joinedChunks(objects, row.id, row.bytes, hash)), { contentType: MODEL_CONTENT_TYPE });
  } catch (error) {
    await startOver(`the ${row.bytes} bytes received could not be read back (${(error as Error).message})`);
  }
  const sha256 = hash.digest("hex");
  if (sha256 !== row.sha256) await startOver(`the ${row.bytes} bytes received hash to sha256 ${sha256}, not the declared ${row.sha256}`);
  let description: unknown;
  try {
    description = await describeOnnxStream((await objects.get(modelKey(row.id))).body, row.bytes);
  } catch (error) {
    await markModelFailed(db, row.id, (error as Error).message, now().toISOString());
    await removeModelFiles(objects, row.id);
    contract(`model ${row.id} is not a usable ONNX model: ${(error as Error).message}`);
  }
  await dropChunks(objects, row.id);
  await markModelReady(db, row.id, description, now().toISOString());
  return (await getModel(db, row.id))!;
}
