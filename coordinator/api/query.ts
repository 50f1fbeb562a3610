/** Query-string helpers: every bad query value becomes contract_validation_failed naming the parameter. */
import type { Request } from "express";
import { AssayError } from "../errors/assay-error.js";

/** A single-valued query parameter, or undefined when absent. */
export function queryString(req: Request, name: string): string | undefined {
  const value = (req.query as Record<string, unknown>)[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new AssayError("contract_validation_failed", `query parameter ${name} must be given once as a plain value`);
  return value;
}

export function queryEnum<T extends string>(req: Request, name: string, allowed: readonly T[]): T | undefined {
  const value = queryString(req, name);
  if (value === undefined) return undefined;
  if (!allowed.includes(value as T)) throw new AssayError("contract_validation_failed", `query parameter ${name} must be one of ${allowed.join(", ")}; got ${JSON.stringify(value)}`);
  return value as T;
}

export function queryInteger(req: Request, name: string, fallback: number, min: number, max: number): number {
  const value = queryString(req, name);
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) {
    throw new AssayError("contract_validation_failed", `query parameter ${name} must be an integer from ${min} to ${max}; got ${JSON.stringify(value)}`);
  }
  return n;
}
