import { ERROR_CODES, type ErrorCode } from "./codes.js";

/**
 * The one error type the coordinator throws on purpose. The express error handler turns it into
 * the spec's envelope; anything else thrown becomes a 500 with no internals in the body.
 */
export class AssayError extends Error {
  readonly code: ErrorCode;
  readonly runId?: string;
  /** Extra top-level fields of `error` (e.g. `partial_result` on budget_exceeded). */
  readonly details?: Record<string, unknown>;
  /** Seconds, for `Retry-After` on rate_limited. */
  readonly retryAfterS?: number;
  /**
   * An HTTP status other than the code's own, where the status names the problem better than the
   * code's (416 with contract_validation_failed: docs/errors.md, "How requests that no specific
   * code covers are answered"). Default the code's status.
   */
  private readonly statusOverride?: number;

  constructor(code: ErrorCode, message: string, options: { runId?: string; cause?: unknown; details?: Record<string, unknown>; retryAfterS?: number; status?: number } = {}) {
    super(message, { cause: options.cause });
    this.name = "AssayError";
    this.code = code;
    this.runId = options.runId;
    this.details = options.details;
    this.retryAfterS = options.retryAfterS;
    this.statusOverride = options.status;
  }

  get status(): number {
    return this.statusOverride ?? ERROR_CODES[this.code].status;
  }

  get retryable(): boolean {
    return ERROR_CODES[this.code].retryable;
  }
}

/** The spec's error envelope for an AssayError; `docsBaseUrl` is where docs/errors.md is served. */
export function errorEnvelope(error: AssayError, docsBaseUrl: string): { error: Record<string, unknown> } {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.runId ? { run_id: error.runId } : {}),
      doc_url: `${docsBaseUrl}/errors#${error.code}`,
      ...error.details,
    },
  };
}
