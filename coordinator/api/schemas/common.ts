/**
 * Shapes every /v1 resource shares: ids, timestamps, the list envelope, the error envelope and the
 * schema registry that names OpenAPI components. Request and response schemas of the resource
 * areas live beside this file (one file per area); coordinator/api/openapi.ts turns them into the
 * document served at GET /v1/openapi.json.
 */
import { z } from "zod";
import { ERROR_CODES } from "../../errors/codes.js";
import { INTERNAL_ERROR_CODE, SERVICE_UNAVAILABLE_CODE } from "../error-handler.js";

export { componentRegistry, COMPONENTS, component } from "../../json/schema-components.js";
import { component } from "../../json/schema-components.js";
import { QUERY_MAX_CHARS } from "../../json/field-bounds.js";

/** An ISO 8601 UTC timestamp, e.g. `2026-11-24T04:20:21.000Z`. */
export const Timestamp = z.iso.datetime({ offset: true }).describe("ISO 8601 UTC timestamp");

/** A timestamp, or null while the event has not happened. */
export const NullableTimestamp = Timestamp.nullable();

/** A non-negative number (meters, money). */
export const NonNegative = z.number().min(0);

/** A binomial rate as the spec shows it: n, success_rate, ci95, interval_method. */
export const RateSummary = component("RateSummary", z.strictObject({
  n: z.number().int().min(0).describe("episodes that ran"),
  success_rate: z.number().min(0).max(1),
  ci95: z.tuple([z.number().min(0).max(1), z.number().min(0).max(1)]).describe("lower and upper bound of the 95% interval"),
  interval_method: z.string().describe("\"beta-binomial-posterior\" for a policy's success rate (the model-level interval over the cells that ran it), \"wilson\" for diagnostic rates such as stages (docs/statistics.md)"),
}).describe("A success rate with its episode count and 95% confidence interval; a bare percentage is never returned."));

/**
 * Every error code a response may carry: the spec's fixed list, plus `internal_error` (a coordinator
 * bug, HTTP 500) and `service_unavailable` (storage full, HTTP 503 with Retry-After).
 */
export const ERROR_CODE_VALUES = [...(Object.keys(ERROR_CODES) as Array<keyof typeof ERROR_CODES>), INTERNAL_ERROR_CODE, SERVICE_UNAVAILABLE_CODE] as const;

/** The spec's error envelope (section 7): every non-2xx response has this shape. */
export const ErrorEnvelope = component("Error", z.strictObject({
  error: z.strictObject({
    code: z.enum(ERROR_CODE_VALUES).describe("one of the spec's error codes; internal_error only on HTTP 500, service_unavailable only on HTTP 503"),
    message: z.string().describe("what was wrong and what to do, quoting the offending value"),
    run_id: z.string().optional().describe("present when the error concerns a run"),
    doc_url: z.url().describe("where the code is documented (docs/errors.md)"),
    partial_result: z.looseObject({}).nullable().optional()
      .describe("GET /v1/runs/{run_id}/result of a stopped or failed run: the Result of the episodes that ran (null when none did)"),
  }),
}).describe("The error envelope of every non-2xx response."));

/**
 * The list envelope `{object: "list", url, data}`; `hasMore` adds the boolean `has_more`
 * (paginated lists: runs, tasks).
 */
export function listOf<T extends z.ZodType>(item: T, options: { hasMore?: boolean; description?: string } = {}) {
  const base = {
    object: z.literal("list"),
    url: z.string().describe("the path of this list"),
    data: z.array(item),
  };
  const schema = options.hasMore
    ? z.strictObject({ ...base, has_more: z.boolean().describe("more items exist after the last one; pass its id as starting_after") })
    : z.strictObject(base);
  return options.description ? schema.describe(options.description) : schema;
}

/** Query parameters of a list that pages with `limit` and `starting_after` (runs, tasks). */
export const LIST_LIMIT_DEFAULT = 20;
export const LIST_LIMIT_MAX = 100;

/** A query integer: digits only, min..max; absent gives undefined (the route applies the default). */
export function queryInteger(name: string, min: number, max: number, fallback: number) {
  return z.string({ error: `query parameter ${name} must be an integer from ${min} to ${max}` })
    .max(String(max).length, { error: `query parameter ${name} must be an integer from ${min} to ${max}` })
    .regex(/^\d+$/, { error: `query parameter ${name} must be an integer from ${min} to ${max}` })
    .transform(Number)
    .pipe(z.number().int().min(min, { error: `query parameter ${name} must be an integer from ${min} to ${max}` })
      .max(max, { error: `query parameter ${name} must be an integer from ${min} to ${max}` }))
    .optional()
    .meta({ description: `integer ${min}..${max}; default ${fallback}`, "x-assay-default": fallback });
}

/** A single-valued query enum with today's message: `query parameter <name> must be one of ...`. */
export function queryEnum<const T extends readonly [string, ...string[]]>(name: string, values: T, description?: string) {
  const schema = z.enum(values, { error: `query parameter ${name} must be one of ${values.join(", ")}` }).optional();
  return description ? schema.describe(description) : schema;
}

/** A single-valued free-text query parameter. */
export function queryText(name: string, description: string) {
  return z.string({ error: `query parameter ${name} must be given once as a plain value` })
    .max(QUERY_MAX_CHARS, { error: `query parameter ${name} must be at most ${QUERY_MAX_CHARS} characters` }).optional().describe(description);
}
