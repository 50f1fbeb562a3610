/**
 * The size of every string, array and object a request may carry (docs/api.md, "Bounds"). Each
 * request schema declares its bound with these, so validation and the OpenAPI document
 * (maxLength, maxItems, maxProperties) come from the same declaration; test/unit/request-bounds.spec.ts
 * walks the document and fails on any request string, array or object without one. A value over
 * its bound is 422 contract_validation_failed naming the field, its length and the limit
 * (coordinator/json/zod-errors.ts adds the length). A leaf: the run domain and the HTTP layer use it.
 */
import { z } from "zod";

/** Pins, references and ids: `<model>@<firmware>`, `<name>@<version>`, `run_...`, `org/name@revision`. */
export const REF_MAX_CHARS = 200;
/** Short names chosen from a list: camera names, state channels, lighting presets, predicate and object names. */
export const NAME_MAX_CHARS = 64;
/** A URL (webhooks, endpoint policies). */
export const URL_MAX_CHARS = 2048;
/** A container image reference with registry, path, tag and digest. */
export const IMAGE_MAX_CHARS = 512;
/** One line of free text: a kit item's description, an out-of-scope line. */
export const TEXT_MAX_CHARS = 2000;
/** One task instruction (a paraphrase a policy is prompted with). */
export const INSTRUCTION_MAX_CHARS = 4000;
/** One predicate expression, e.g. `pose(cube).z > 0.06 for 1.0s`. */
export const PREDICATE_MAX_CHARS = 2000;
/** A query parameter's text (ids, names, integers). */
export const QUERY_MAX_CHARS = 200;

/** Robot pins of one run or gate (eval, matrix, verify, gates). */
export const ROBOTS_MAX = 32;
/** Environments of one matrix run. */
export const ENVIRONMENTS_MAX = 32;
/** Lines of one kit. */
export const KIT_ITEMS_MAX = 100;
/** Instructions of one list of a task (sampled per episode, held out). */
export const INSTRUCTIONS_MAX = 100;
/** Objects, success predicates, stages, envelope lines of one task. */
export const TASK_ENTRIES_MAX = 32;
/** Cameras, state channels, lighting presets and observation-map keys one request may name. */
export const CHANNELS_MAX = 16;

/** `{error}` for `.max(n)` of a string: the limit in the message (zod-errors.ts adds the length given). */
export function tooLong(max: number, field = ""): { error: string } {
  return { error: `${field ? `${field} ` : ""}must be at most ${max} characters` };
}

/** `{error}` for `.max(n)` of an array. */
export function tooMany(max: number, field = ""): { error: string } {
  return { error: `${field ? `${field} ` : ""}must have at most ${max} items` };
}

/**
 * A string-keyed object of at most `maxEntries` entries whose keys are at most `maxKeyChars`
 * long; the OpenAPI document shows both (`maxProperties`, `propertyNames.maxLength`).
 * `message` replaces the default "must have at most N entries" (compare names "exactly two").
 */
export function boundedRecord<V extends z.ZodType>(value: V, bounds: { maxEntries: number; maxKeyChars?: number; message?: string }, params?: { error?: string | ((issue: z.core.$ZodRawIssue) => string | undefined) }) {
  const keyChars = bounds.maxKeyChars ?? NAME_MAX_CHARS;
  return z.record(z.string().max(keyChars, tooLong(keyChars, "a key")), value, params)
    .refine((record) => Object.keys(record).length <= bounds.maxEntries, {
      error: bounds.message ?? `must have at most ${bounds.maxEntries} entries`, params: { bound: "entries" },
    })
    .meta({ maxProperties: bounds.maxEntries });
}
