/**
 * Text with a NUL character (U+0000) is refused at the door: PostgreSQL cannot store it in a text
 * column, and no name, id or value of this API needs it. Checked in the URL (path and query) and
 * in every string and key of a JSON body, so both stores answer alike: 422, never a store error.
 */
import type { NextFunction, Request, Response } from "express";
import { AssayError } from "../errors/assay-error.js";

export function rejectNulInUrl() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (/%00/.test(req.originalUrl) || req.originalUrl.includes("\u0000")) {
      throw new AssayError("contract_validation_failed", "the request URL contains a NUL character (%00); no id, name or query value of this API contains one");
    }
    next();
  };
}

export function rejectNulInBody() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (req.body !== undefined && containsNul(req.body)) {
      throw new AssayError("contract_validation_failed", "the request body contains a NUL character (\\u0000) in a string or key; remove it");
    }
    next();
  };
}

/** Walks with an explicit stack; it runs after the depth bound, on bodies at most 32 levels deep. */
function containsNul(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === "string") {
      if (item.includes("\u0000")) return true;
    } else if (item !== null && typeof item === "object") {
      for (const [key, child] of Object.entries(item)) {
        if (key.includes("\u0000")) return true;
        stack.push(child);
      }
    }
  }
  return false;
}
