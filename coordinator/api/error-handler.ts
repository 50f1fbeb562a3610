/**
 * The one express error handler: AssayError -> the spec's envelope and status; body-parser failures
 * -> contract_validation_failed; storage full (SQLite, PostgreSQL or the artifact disk) -> 503
 * service_unavailable with Retry-After; anything else -> 500 with the envelope shape and no internals.
 */
import type { NextFunction, Request, Response } from "express";
import { AssayError, errorEnvelope } from "../errors/assay-error.js";
import { isStorageFull } from "../errors/storage-full.js";

/** `error.code` of an unexpected failure. Not one of the spec's codes: it means a coordinator bug. */
export const INTERNAL_ERROR_CODE = "internal_error";

/**
 * `error.code` of HTTP 503: the service cannot take the request for now (its storage is full), with
 * `Retry-After`. Not one of the spec's codes (none fits an operator-side condition); like
 * internal_error it is never an answer to bad input.
 */
export const SERVICE_UNAVAILABLE_CODE = "service_unavailable";

/** `Retry-After` of a storage-full answer: long enough for an operator's alert to be seen, short enough to resume soon after space is freed. */
export const STORAGE_FULL_RETRY_AFTER_S = 60;

interface BodyParserError {
  type?: string;
  status?: number;
  expose?: boolean;
}

/**
 * Turns the request-level failures of express and body-parser into AssayErrors: a path that is not
 * valid percent-encoding (404: no resource has that name), a body whose Content-Encoding lies (gzip,
 * deflate or br that does not decompress), bad JSON, too large, bad charset. Undefined otherwise.
 */
export function fromBodyParserError(error: unknown): AssayError | undefined {
  const e = error as BodyParserError & { code?: string };
  if (error instanceof URIError && e.status === 400) {
    return new AssayError("not_found", "the request path is not valid percent-encoding (a % must be followed by two hex digits); encode the path's parts with encodeURIComponent");
  }
  if (typeof e?.type !== "string" && e?.status === 400 && typeof e.code === "string" && (e.code.startsWith("Z_") || e.code.startsWith("ERR__ERROR_FORMAT") || e.code.startsWith("ERR_BROTLI"))) {
    return new AssayError("contract_validation_failed", "request body does not decompress as its Content-Encoding says (gzip, deflate or br); send it uncompressed or encoded as declared");
  }
  if (typeof e?.type !== "string" || typeof e.status !== "number") return undefined;
  switch (e.type) {
    case "entity.parse.failed":
      return new AssayError("contract_validation_failed", `request body is not valid JSON (${(error as Error).message}); send a JSON object with Content-Type: application/json`);
    case "entity.too.large":
      return new AssayError("contract_validation_failed", "request body is larger than the 1 MB limit");
    case "encoding.unsupported":
    case "charset.unsupported":
      return new AssayError("contract_validation_failed", "request body must be UTF-8 JSON");
    default:
      return e.status < 500 ? new AssayError("contract_validation_failed", `malformed request body (${e.type})`) : undefined;
  }
}

export function errorHandler(docsUrl: string, log: (message: string, error: unknown) => void) {
  return (error: unknown, req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) {
      // A streaming response (SSE, artifact) failed midway: all we can do is end it.
      res.end();
      return;
    }
    const assay = error instanceof AssayError ? error : fromBodyParserError(error);
    if (assay) {
      if (assay.code === "rate_limited" && assay.retryAfterS !== undefined) res.set("Retry-After", String(Math.ceil(assay.retryAfterS)));
      res.status(assay.status).json(errorEnvelope(assay, docsUrl));
      return;
    }
    if (isStorageFull(error)) {
      log(`storage full on ${req.method} ${req.originalUrl}: free space on the database or artifact store`, error);
      res.status(503).set("Retry-After", String(STORAGE_FULL_RETRY_AFTER_S)).json({
        error: {
          code: SERVICE_UNAVAILABLE_CODE,
          message: `the service is out of storage space and could not complete this request; retry after ${STORAGE_FULL_RETRY_AFTER_S} s`,
          doc_url: `${docsUrl}/errors#${SERVICE_UNAVAILABLE_CODE}`,
        },
      });
      return;
    }
    log(`unhandled error on ${req.method} ${req.originalUrl}`, error);
    res.status(500).json({
      error: {
        code: INTERNAL_ERROR_CODE,
        message: "the coordinator failed to handle this request; it was logged. Retry later, and report it if it persists",
        doc_url: `${docsUrl}/errors#${INTERNAL_ERROR_CODE}`,
      },
    });
    void next;
  };
}
