/** The Model object of the API (docs/api.md, "Models"), from its row. */
import type { OnnxModelDescription } from "../../protocol/policy/onnx/model-description.js";
import { retentionHours } from "../runs/run-request.js";
import type { ModelRow } from "../store/models-repo.js";
import { refText } from "./model-ref.js";

/** When a ready model passes its retention. */
export function modelExpiresAt(row: Pick<ModelRow, "ready_at" | "retention">): Date | null {
  if (!row.ready_at) return null;
  return new Date(Date.parse(row.ready_at) + (retentionHours(row.retention) ?? 0) * 3_600_000);
}

export function modelView(row: ModelRow, baseUrl: string): Record<string, unknown> {
  const io = row.description ? (JSON.parse(row.description) as OnnxModelDescription) : null;
  const tensors = (values: OnnxModelDescription["inputs"]) => values.map((v) => ({ name: v.name, type: v.elementType, shape: v.dims ?? null }));
  return {
    id: row.id,
    object: "model",
    name: row.name,
    revision: row.revision,
    ref: refText(row.name, row.revision),
    format: row.format,
    source: row.source,
    status: row.status,
    bytes: row.bytes,
    sha256: row.sha256,
    received_bytes: row.received_bytes,
    upload_url: row.status === "uploading" ? `${baseUrl}/v1/models/${row.id}/content` : null,
    retention: row.retention,
    created: row.created,
    ready_at: row.ready_at,
    expires_at: row.status === "ready" ? modelExpiresAt(row)!.toISOString() : null,
    ended_at: row.ended_at,
    io: io ? { inputs: tensors(io.inputs), outputs: tensors(io.outputs), opset: io.opset ?? null, producer: io.producer.name || null } : null,
    failure: row.failure_message ? { message: row.failure_message } : null,
  };
}
