/**
 * The JSON body stage of /v1 as one middleware: express.json (at most `limit`), then the depth
 * bound (json-depth.ts), then the NUL refusal (nul-characters.ts), in that order, each answering as
 * it would alone. A request without a body passes at once (every GET): body-parser's own test
 * (type-is `hasBody`: a Transfer-Encoding header or a numeric Content-Length), after which none of
 * the three would do anything. One step of the router instead of three on every request.
 */
import express, { type NextFunction, type Request, type Response } from "express";
import { rejectDeepJson } from "./json-depth.js";
import { rejectNulInBody } from "./nul-characters.js";

export interface JsonBodyOptions {
  /** Largest body accepted, as express.json takes it ("1mb"). */
  limit: string;
  /** Deepest nesting of arrays and objects accepted. */
  maxDepth: number;
}

/** body-parser's test (type-is `hasBody`) of whether a request carries a body at all. */
function hasBody(req: Request): boolean {
  return req.headers["transfer-encoding"] !== undefined || !Number.isNaN(Number(req.headers["content-length"]));
}

export function jsonBody(options: JsonBodyOptions) {
  const parse = express.json({ limit: options.limit });
  const depth = rejectDeepJson(options.maxDepth);
  const nul = rejectNulInBody();
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!hasBody(req)) return next();
    parse(req, res, (error?: unknown) => {
      if (error) return next(error);
      // The checks throw their AssayError; the router is not on the stack here (the body is read asynchronously).
      let checked = false;
      try {
        depth(req, res, () => nul(req, res, () => (checked = true)));
      } catch (problem) {
        return next(problem);
      }
      if (checked) next();
    });
  };
}
