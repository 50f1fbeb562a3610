/**
 * A resumable model upload (docs/api.md, "Models"): the file's sha256 first, then either the upload
 * of this name and revision already in progress with the same bytes (resumed at its
 * `received_bytes`) or a new one (POST /v1/models), then `Content-Range` chunks read from the file one
 * at a time (never the whole file in memory), each PUT at where the server stands. A broken connection
 * ends the command (exit 3) saying how far the server got; running the same command again resumes there.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import type { ApiClient } from "./api-client.js";
import { CliError, EXIT, usageError } from "./exit-codes.js";
import { byteSize } from "./human-format.js";

export interface Model {
  id: string;
  name: string;
  revision: string;
  ref: string;
  format: string;
  source: string;
  status: "uploading" | "ready" | "failed" | "deleted" | "expired";
  bytes: number;
  sha256: string;
  received_bytes: number;
  retention: string;
  created: string;
  ready_at: string | null;
  expires_at: string | null;
  ended_at: string | null;
  io: { inputs: Tensor[]; outputs: Tensor[]; opset: number | null; producer: string | null } | null;
  failure: { message: string } | null;
}

export interface Tensor {
  name: string;
  type: string;
  shape: (number | string)[] | null;
}

export interface UploadRequest {
  file: string;
  name: string;
  revision?: string;
  retention?: string;
  chunkBytes: number;
}

export interface UploadEvents {
  /** The file was hashed; `resumed` is set when an upload in progress is picked up. */
  started(model: Model, resumed: boolean): void;
  /** Bytes the server has counted so far. */
  progress(receivedBytes: number, totalBytes: number): void;
}

export interface Uploaded {
  model: Model;
  /** The last answer's body, exactly (for --json). */
  text: string;
}

const modelPath = (id: string) => `/v1/models/${encodeURIComponent(id)}`;

/** The file's size and SHA-256, read as a stream. */
async function fileDigest(file: string): Promise<{ bytes: number; sha256: string }> {
  let size: number;
  try {
    const info = await stat(file);
    if (!info.isFile()) throw usageError(`cannot upload ${file}: it is not a file`);
    size = info.size;
  } catch (error) {
    if (error instanceof CliError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw usageError(`cannot read ${file}: ${code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : (error as Error).message}`);
  }
  if (size === 0) throw usageError(`cannot upload ${file}: it is empty`);
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return { bytes: size, sha256: hash.digest("hex") };
}

/** The upload of `name@revision` in progress with exactly these bytes, if there is one. */
async function uploadInProgress(api: ApiClient, name: string, revision: string, digest: { bytes: number; sha256: string }): Promise<Model | undefined> {
  const listed = await api.json<{ data: Model[] }>("GET", "/v1/models", { query: { name, limit: 100 } });
  return listed.data.data.find((m) => m.status === "uploading" && m.revision === revision && m.bytes === digest.bytes && m.sha256 === digest.sha256);
}

export async function uploadModel(api: ApiClient, request: UploadRequest, events: UploadEvents): Promise<Uploaded> {
  const digest = await fileDigest(request.file);
  const revision = request.revision ?? "main";
  let model: Model | undefined = await uploadInProgress(api, request.name, revision, digest);
  let text = "";
  const resumed = model !== undefined;
  if (!model) {
    const body = { name: request.name, ...(request.revision ? { revision: request.revision } : {}), format: "onnx", bytes: digest.bytes, sha256: digest.sha256, ...(request.retention ? { retention: request.retention } : {}) };
    const created = await api.json<Model>("POST", "/v1/models", { body: JSON.stringify(body) });
    model = created.data;
    text = created.text;
  }
  events.started(model, resumed);
  events.progress(model.received_bytes, model.bytes);
  const handle = await open(request.file, "r");
  try {
    while (model.status === "uploading") {
      const first: number = model.received_bytes;
      const length = Math.min(request.chunkBytes, model.bytes - first);
      const chunk = Buffer.alloc(length);
      const { bytesRead } = await handle.read(chunk, 0, length, first);
      if (bytesRead !== length) throw usageError(`${request.file} changed while it was uploaded (it ended at byte ${first + bytesRead}); upload it again`);
      let answer;
      try {
        // The documented path under the user's base URL, not upload_url: the key goes only where the user sends it.
        answer = await api.json<Model>("PUT", `${modelPath(model.id)}/content`, {
          bytes: new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length) as Uint8Array<ArrayBuffer>,
          headers: { "content-type": "application/octet-stream", "content-range": `bytes ${first}-${first + length - 1}/${model.bytes}` },
        });
      } catch (error) {
        if (error instanceof CliError && error.unreachable) {
          throw new CliError(EXIT.api, `the upload of model ${model.id} broke after ${byteSize(first)} of ${byteSize(model.bytes)} were stored (${error.message.replace(/^cannot reach the Assay API at \S+: /, "").replace(/; is the coordinator running\?$/, "")}); run the same command again to resume from there`, { unreachable: true, cause: error });
        }
        throw error;
      }
      model = answer.data;
      text = answer.text;
      events.progress(model.received_bytes, model.bytes);
      if (model.status === "uploading" && model.received_bytes <= first) {
        throw new CliError(EXIT.api, `the server did not count the chunk at byte ${first} of model ${model.id} (it stands at ${model.received_bytes}); run the same command again to resume`);
      }
    }
  } finally {
    await handle.close();
  }
  if (model.status !== "ready") {
    throw new CliError(EXIT.api, `model ${model.id} is ${model.status}${model.failure ? `: ${model.failure.message}` : ""}`);
  }
  return { model, text };
}
