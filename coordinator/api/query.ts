/**
 * Single query parameters, for routes that read one at a time (GET /v1/runs, /labels). The wording
 * and the checks are the schema helpers' of coordinator/api/schemas/common.ts, so a parameter
 * read here fails exactly as one declared in a route's query schema: contract_validation_failed
 * naming the parameter and quoting the value.
 */
import type { Request } from "express";
import { z } from "zod";
import { queryEnum as enumParam, queryInteger as integerParam, queryText } from "./schemas/common.js";
import { parseQuery } from "./validate-request.js";

function one<T extends z.ZodType>(req: Request, name: string, schema: T): z.output<T> {
  return (parseQuery(z.object({ [name]: schema }), req) as Record<string, z.output<T>>)[name]!;
}

/** A single-valued query parameter, or undefined when absent. */
export function queryString(req: Request, name: string): string | undefined {
  return one(req, name, queryText(name, name));
}

/** A query parameter that must be one of `allowed`, or undefined when absent. */
export function queryEnum<T extends string>(req: Request, name: string, allowed: readonly T[]): T | undefined {
  return one(req, name, enumParam(name, allowed as unknown as readonly [T, ...T[]])) as T | undefined;
}

/** An integer query parameter from `min` to `max`; `fallback` when absent. */
export function queryInteger(req: Request, name: string, fallback: number, min: number, max: number): number {
  return (one(req, name, integerParam(name, min, max, fallback)) as number | undefined) ?? fallback;
}
