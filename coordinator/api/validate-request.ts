/**
 * Request validation from the zod schemas of coordinator/api/schemas/: bodies and query strings
 * through coordinator/json/zod-errors.ts, whose first problem becomes the spec's error envelope.
 */
import type { Request } from "express";
import type { z } from "zod";
import { parseWith, type ParseOptions } from "../json/zod-errors.js";

export { describeIssue, parseWith, pathText, type ParseOptions } from "../json/zod-errors.js";

/** A request body checked against `schema` (an absent body is checked as `{}` only when `emptyIsObject`). */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown, options: ParseOptions & { emptyIsObject?: boolean } = {}): z.output<T> {
  return parseWith(schema, body === undefined && options.emptyIsObject ? {} : body, options);
}

/** The query string checked against `schema` (an object schema of single-valued parameters). */
export function parseQuery<T extends z.ZodType>(schema: T, req: Request, options: ParseOptions = {}): z.output<T> {
  return parseWith(schema, { ...(req.query as Record<string, unknown>) }, { prefix: "query parameter ", ...options });
}
