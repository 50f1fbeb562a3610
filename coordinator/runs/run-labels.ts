/**
 * A run's labels: its `name` (a short human title) and its `metadata` (string keys to string values,
 * Stripe's rules: https://docs.stripe.com/metadata). Both are accepted at submission by every kind
 * and changed later with POST /v1/runs/{run_id}; neither changes what runs or what it costs (a quote
 * ignores them). Declared once with zod: validation, types and the OpenAPI document come from here.
 * A leaf: the kinds, the store's callers and the API import it.
 */
import { z } from "zod";
import { component } from "../json/schema-components.js";
import { AssayError } from "../errors/assay-error.js";

/** Stripe's limits: at most 50 keys, a key at most 40 characters, a value at most 500. */
export const METADATA_KEYS_MAX = 50;
export const METADATA_KEY_MAX_CHARS = 40;
export const METADATA_VALUE_MAX_CHARS = 500;
/** A run's name: one line of at most 100 characters. */
export const RUN_NAME_MAX_CHARS = 100;

/** Why `key` cannot be a metadata key (Stripe's rules), or undefined when it can; the caller quotes the key. */
export function metadataKeyProblem(key: string): string | undefined {
  if (key.length === 0) return `metadata keys must be 1 to ${METADATA_KEY_MAX_CHARS} characters; got an empty key`;
  if (key.length > METADATA_KEY_MAX_CHARS) return `metadata key is ${key.length} characters; keys are at most ${METADATA_KEY_MAX_CHARS}`;
  if (/[[\]]/.test(key)) return "metadata key contains a square bracket; keys may not contain [ or ]";
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(key)) return "metadata key contains a control character; keys are one line of text";
  return undefined;
}

const valueMessage = `must be a string of at most ${METADATA_VALUE_MAX_CHARS} characters (send numbers and booleans as strings; "" removes the key); nested objects are not allowed`;

/**
 * `metadata`: up to 50 string keys (1..40 characters, no square brackets) to string values of at most
 * 500 characters. A value "" means "no such key": dropped at submission, removed by an update.
 */
export const Metadata = component("Metadata", z.record(
  z.string(),
  z.string({ error: valueMessage }).max(METADATA_VALUE_MAX_CHARS, { error: valueMessage }),
  { error: `metadata must be an object of string keys to string values, e.g. {"experiment": "grasp-v2"}` },
).superRefine((record, ctx) => {
  const keys = Object.keys(record);
  for (const key of keys) {
    const problem = metadataKeyProblem(key);
    if (problem) ctx.addIssue({ code: "custom", message: problem, input: key, path: [] });
  }
  if (keys.length > METADATA_KEYS_MAX) {
    ctx.addIssue({ code: "custom", message: `metadata has ${keys.length} keys; at most ${METADATA_KEYS_MAX} are allowed`, input: keys.length, path: [] });
  }
}).meta({
  maxProperties: METADATA_KEYS_MAX,
  propertyNames: { minLength: 1, maxLength: METADATA_KEY_MAX_CHARS, pattern: "^[^\\[\\]]+$" },
}).describe(`labels of your own (Stripe's rules): up to ${METADATA_KEYS_MAX} keys of 1..${METADATA_KEY_MAX_CHARS} characters without square brackets, each a string of at most ${METADATA_VALUE_MAX_CHARS} characters; "" removes a key. Filter the runs list with metadata[key]=value`));

// A name is one line: no control characters, not only spaces.
const nameMessage = `must be 1 to ${RUN_NAME_MAX_CHARS} characters on one line (no control characters, not only spaces)`;
/** `name`: a short human title for a run. */
export const RunName = z.string({ error: nameMessage }).min(1, { error: nameMessage }).max(RUN_NAME_MAX_CHARS, { error: nameMessage })
  // eslint-disable-next-line no-control-regex
  .regex(/^(?=.*\S)[^\u0000-\u001f\u007f]+$/su, { error: nameMessage })
  .describe(`a short human title shown wherever the run is (console, CLI, reports); 1..${RUN_NAME_MAX_CHARS} characters on one line`);

/** The fields every kind accepts for labels (spread into COMMON_RUN_FIELDS). */
export const LABEL_FIELDS = {
  name: RunName.optional(),
  metadata: Metadata.optional(),
};

/** POST /v1/runs/{run_id} body: change a run's name and metadata. */
export const UpdateRunRequest = component("UpdateRunRequest", z.strictObject({
  name: z.union([RunName, z.literal(""), z.null()], { error: `name ${nameMessage}; "" or null removes it` }).optional()
    .describe(`the new name; "" or null removes it`),
  metadata: Metadata.optional().describe(`keys to set (merged into the run's metadata); a key set to "" is removed; keys not sent are kept`),
}, { error: `request body must be an object {"name"?: string, "metadata"?: {key: string}}` })
  .describe("the labels to change; fields not sent are kept. Nothing about what runs changes"));

export type RunMetadata = Record<string, string>;

/** The labels a submission carries: its name (or null) and its metadata without "" values. */
export function labelsOfRequest(request: Record<string, unknown>): { name: string | null; metadata: RunMetadata } {
  const name = typeof request.name === "string" ? request.name : null;
  const metadata: RunMetadata = {};
  const given = request.metadata;
  if (given && typeof given === "object" && !Array.isArray(given)) {
    for (const [key, value] of Object.entries(given as Record<string, unknown>)) if (typeof value === "string" && value !== "") metadata[key] = value;
  }
  return { name, metadata };
}

/**
 * The metadata after an update: keys with "" removed, the others set; 422 naming the counts when
 * the result would hold more than 50 keys.
 */
export function mergeMetadata(current: RunMetadata, update: RunMetadata, runId: string): RunMetadata {
  const next: RunMetadata = { ...current };
  for (const [key, value] of Object.entries(update)) {
    if (value === "") delete next[key];
    else next[key] = value;
  }
  const count = Object.keys(next).length;
  if (count > METADATA_KEYS_MAX) {
    throw new AssayError("contract_validation_failed", `metadata would have ${count} keys after this update; at most ${METADATA_KEYS_MAX} are allowed (the run has ${Object.keys(current).length}); remove keys by setting them to ""`, { runId });
  }
  return next;
}

/** The request without its labels: what a quote prices and compares (labels change neither the run nor its cost). */
export function withoutLabels(request: Record<string, unknown>): Record<string, unknown> {
  const { name: _name, metadata: _metadata, ...rest } = request;
  return rest;
}
