/** Policy models (docs/api.md, "Models"): ONNX checkpoints referenced by `policy.hf`. */
import { z } from "zod";
import { MODEL_FORMATS } from "../../store/models-repo.js";
import { isModelName, isRevision } from "../../runs/model-ref.js";
import { REF_MAX_CHARS } from "../../json/field-bounds.js";
import { component, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, NullableTimestamp, queryInteger, queryText, Timestamp } from "./common.js";

const nameMessage = "name must be a model name as org/name (letters, digits, . _ -; at most 96 characters each side)";
const revisionMessage = "revision must be letters, digits, . _ - (at most 64 characters)";

/** Body of POST /v1/models. */
export const CreateModelRequest = z.strictObject({
  name: z.string({ error: nameMessage }).max(REF_MAX_CHARS, { error: nameMessage }).refine(isModelName, { error: nameMessage }).describe("the name policies reference in hf, as org/name"),
  revision: z.string({ error: revisionMessage }).max(64, { error: revisionMessage }).refine(isRevision, { error: revisionMessage }).optional().describe("default main; policy.hf names it as org/name@revision"),
  format: z.enum(MODEL_FORMATS, { error: `format must be one of ${MODEL_FORMATS.join(", ")}` }).describe("onnx: run on the cell by runtime onnx"),
  bytes: z.number({ error: "bytes must be the file's size, a positive integer" }).int({ error: "bytes must be the file's size, a positive integer" })
    .min(1, { error: "bytes must be the file's size, a positive integer" }).describe("the file's exact size"),
  sha256: z.string({ error: "sha256 must be the file's SHA-256, 64 hex digits" }).max(64, { error: "sha256 must be the file's SHA-256, 64 hex digits" }).regex(/^[0-9a-fA-F]{64}$/, { error: "sha256 must be the file's SHA-256, 64 hex digits" })
    .describe("checked when the last byte arrives"),
  retention: z.string().max(16, { error: "retention must be <n>h or <n>d, 1h..365d" }).optional().describe("how long the model is kept once ready, <n>h or <n>d, 1h..365d; default 90d"),
});

const TensorInfo = z.strictObject({
  name: z.string(),
  type: z.string().describe("element type, e.g. float32"),
  shape: z.array(z.union([z.number().int(), z.string()])).nullable().describe("dimensions; a string is a symbolic dimension (e.g. batch); null when the model declares none"),
});

export const Model = component("Model", z.strictObject({
  id: z.string(),
  object: z.literal("model"),
  name: z.string(),
  revision: z.string(),
  ref: z.string().describe("what policy.hf names it by: name, or name@revision when the revision is not main"),
  format: z.enum(MODEL_FORMATS),
  source: z.enum(["upload", "mirror"]).describe("upload: sent through the API; mirror: copied from the operator's local mirror by a run that named it"),
  status: z.enum(["uploading", "ready", "failed", "deleted", "expired"]),
  bytes: z.number().int(),
  sha256: z.string(),
  received_bytes: z.number().int().describe("bytes counted so far; the next chunk starts here"),
  upload_url: z.url().nullable().describe("PUT the bytes here while uploading; null otherwise"),
  retention: z.string(),
  created: Timestamp,
  ready_at: NullableTimestamp,
  expires_at: NullableTimestamp.describe("when a ready model passes its retention (kept longer while an unfinished run uses it)"),
  ended_at: NullableTimestamp.describe("when it was deleted, expired or failed"),
  io: z.strictObject({
    inputs: z.array(TensorInfo), outputs: z.array(TensorInfo),
    opset: z.number().int().nullable().describe("the default operator set version"), producer: z.string().nullable(),
  }).nullable().describe("the model's declared inputs and outputs, once ready"),
  failure: z.strictObject({ message: z.string() }).nullable(),
}).describe("A policy model: an ONNX checkpoint a checkpoint policy references by hf."));

/** Query of GET /v1/models. */
export const ModelListQuery = z.object({
  name: queryText("name", "only models of this name (org/name)"),
  limit: queryInteger("limit", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT),
  starting_after: queryText("starting_after", "a model id: list the models created before it"),
});
