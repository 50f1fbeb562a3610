/**
 * Text with a NUL character (U+0000) is refused at the door: PostgreSQL cannot store it in a text
 * column, and no name, id or value of this API needs it. Checked in the URL (path and query) and
 * in every string and key of a JSON body, so both stores answer alike, never with a store error.
 */
import type { NextFunction, Request, Response } from "express";
import { AssayError } from "../errors/assay-error.js";

/** In the path: 404, no resource has such a name. In the query: 422, no query value takes one. */
export function rejectNulInUrl() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    // Almost every URL has neither form: one scan each, and nothing else to do.
    if (!hasNul(req.originalUrl)) return next();
    const queryAt = req.originalUrl.indexOf("?");
    const path = queryAt === -1 ? req.originalUrl : req.originalUrl.slice(0, queryAt);
    const query = queryAt === -1 ? "" : req.originalUrl.slice(queryAt);
    if (hasNul(path)) throw new AssayError("not_found", "the request path contains a NUL character (%00); no id or name of this API contains one");
    if (hasNul(query)) throw new AssayError("contract_validation_failed", "the query string contains a NUL character (%00); no query value of this API takes one");
    next();
  };
}

function hasNul(text: string): boolean {
  return text.includes("%00") || text.includes("\u0000");
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
