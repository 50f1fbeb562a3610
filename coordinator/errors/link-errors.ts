/**
 * CellLink failures: one stable reason per failure, mapped to its gRPC status code here and
 * nowhere else. The status details read `<reason>: <what was wrong and what to do>`, so an agent
 * (or a technician reading its log) can branch on the reason without parsing prose.
 */
import { Metadata, status, type StatusObject } from "@grpc/grpc-js";

export const LINK_REASONS = {
  token_missing: status.UNAUTHENTICATED,
  token_unknown: status.UNAUTHENTICATED,
  cell_revoked: status.UNAUTHENTICATED,
  hello_required: status.INVALID_ARGUMENT,
  cell_id_mismatch: status.INVALID_ARGUMENT,
  bad_message: status.INVALID_ARGUMENT,
  superseded: status.ABORTED,
  heartbeat_timeout: status.UNAVAILABLE,
  shutting_down: status.UNAVAILABLE,
  artifact_unknown: status.NOT_FOUND,
  artifact_not_yours: status.PERMISSION_DENIED,
  offset_mismatch: status.FAILED_PRECONDITION,
  artifact_corrupt: status.DATA_LOSS,
  internal: status.INTERNAL,
} as const satisfies Record<string, status>;

export type LinkReason = keyof typeof LINK_REASONS;

export class LinkError extends Error {
  readonly reason: LinkReason;

  constructor(reason: LinkReason, message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = "LinkError";
    this.reason = reason;
  }
}

/** The gRPC status for anything thrown while serving a call; unknown errors leak no internals. */
export function toGrpcStatus(error: unknown): Partial<StatusObject> & { code: status; details: string } {
  const metadata = new Metadata();
  if (error instanceof LinkError) {
    metadata.set("assay-reason", error.reason);
    return { code: LINK_REASONS[error.reason], details: `${error.reason}: ${error.message}`, metadata };
  }
  metadata.set("assay-reason", "internal");
  return { code: status.INTERNAL, details: "internal: the coordinator failed to process this call; it is logged, retry later", metadata };
}
