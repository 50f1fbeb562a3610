/**
 * A bound on how deeply a JSON body nests, checked right after parsing: no request shape of the
 * API goes deeper than a dozen levels, and walking or quoting a 20,000-deep array must never
 * cost the stack. Deeper bodies are 422 contract_validation_failed before any route sees them.
 */
import type { NextFunction, Request, Response } from "express";
import { AssayError } from "../errors/assay-error.js";
import { jsonDepth } from "../json/bounded-json.js";

export const MAX_JSON_DEPTH = 32;

export function rejectDeepJson(maxDepth: number) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (req.body !== undefined && jsonDepth(req.body, maxDepth) > maxDepth) {
      throw new AssayError("contract_validation_failed", `request body nests arrays and objects more than ${maxDepth} levels deep; no request of this API needs more`);
    }
    next();
  };
}
