/**
 * The small checks every run-body validator uses. Each failure is an AssayError naming the field,
 * quoting the offending value and saying what would be accepted. A leaf: imports no kind.
 */
import { AssayError } from "../errors/assay-error.js";
import { boundedJson } from "../json/bounded-json.js";
import type { ErrorCode } from "../errors/codes.js";

/** A value quoted for an error message, bounded in length and depth (a request's value may be huge). */
export const q = (value: unknown): string => boundedJson(value, 200);

export function fail(code: ErrorCode, message: string): never {
  throw new AssayError(code, message);
}

/** 422 contract_validation_failed with `message`. */
export function contract(message: string): never {
  fail("contract_validation_failed", message);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
