/** The Model object of the API (docs/api.md, "Models"), from its row. */
import type { OnnxModelDescription } from "../../protocol/policy/onnx/model-description.js";
import { ONNX_READ_LIMITS } from "../../protocol/policy/onnx/onnx-wire-reader.js";
import { retentionHours } from "../runs/run-request.js";
import type { ModelRow } from "../store/models-repo.js";
import { refText } from "../runs/model-ref.js";

/** When a ready model passes its retention. */
export function modelExpiresAt(row: Pick<ModelRow, "ready_at" | "retention">): Date | null {
  if (!row.ready_at) return null;
  return new Date(Date.parse(row.ready_at) + (retentionHours(row.retention) ?? 0) * 3_600_000);
}

/**
 * What `io` shows at most: the reader refuses models past these bounds (ONNX_READ_LIMITS), and a
 * description stored before it existed is cut to them, so a model's answer stays short.
 */
const IO_SHOWN = { tensors: ONNX_READ_LIMITS.maxInputs, rank: ONNX_READ_LIMITS.maxRank, nameChars: ONNX_READ_LIMITS.maxNameBytes };

export function modelView(row: ModelRow, baseUrl: string): Record<string, unknown> {
  const io = row.description ? (JSON.parse(row.description) as OnnxModelDescription) : null;
  const cut = (text: string) => (text.length > IO_SHOWN.nameChars ? text.slice(0, IO_SHOWN.nameChars) : text);
  const tensors = (values: OnnxModelDescription["inputs"]) =>
    values.slice(0, IO_SHOWN.tensors).map((v) => ({
      name: cut(v.name), type: cut(v.elementType), shape: v.dims ? v.dims.slice(0, IO_SHOWN.rank).map((d) => (typeof d === "string" ? cut(d) : d)) : null,
    }));
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
    io: io ? { inputs: tensors(io.inputs), outputs: tensors(io.outputs), opset: io.opset ?? null, producer: cut(io.producer.name) || null } : null,
    failure: row.failure_message ? { message: row.failure_message } : null,
  };
}
