/**
 * The Kit lifecycle (spec section 3): registered -> received -> tracked -> available, one step at a
 * time, each caused by a technician operation. The only place that knows legal moves.
 */
import { AssayError } from "../errors/assay-error.js";

export type KitStatus = "registered" | "received" | "tracked" | "available";
export const KIT_STATUSES: readonly KitStatus[] = ["registered", "received", "tracked", "available"];

/** Technician operations and the path segment that triggers each (POST /v1/kits/{id}/<op>). */
export type KitOperation = "receive" | "track" | "make-available";

const TABLE: Record<KitStatus, { op: KitOperation; to: KitStatus } | undefined> = {
  registered: { op: "receive", to: "received" },
  received: { op: "track", to: "tracked" },
  tracked: { op: "make-available", to: "available" },
  available: undefined,
};

/** The operation allowed next from `status`, or undefined once available. */
export function nextKitOperation(status: KitStatus): KitOperation | undefined {
  return TABLE[status]?.op;
}

/**
 * The status `op` moves a kit in `status` to, or a 422 contract_validation_failed naming the current
 * status and the allowed next step.
 */
export function nextKitStatus(status: KitStatus, op: KitOperation, kit: { id: string; name: string }): KitStatus {
  const step = TABLE[status];
  if (step && step.op === op) return step.to;
  const allowed = step ? `the next step is POST /v1/kits/${kit.id}/${step.op}` : "it is available and has no further step";
  throw new AssayError("contract_validation_failed", `kit ${JSON.stringify(kit.name)} (${kit.id}) is ${status}; cannot ${op} it: ${allowed}`);
}
