/**
 * Bounds of model uploads (docs/api.md, "Models"), a coordinator option (`models`): the largest
 * file, the largest chunk one PUT may carry, the stored model bytes an account may hold (declared
 * uploads plus ready models), and how many uploads an account may have in progress at once.
 */

export interface ModelLimits {
  /** Largest model accepted, in bytes. Default 2 GiB: what protobuf ONNX holds without external data. */
  maxBytes: number;
  /** Largest chunk one PUT may carry. Default 64 MiB. */
  maxChunkBytes: number;
  /** Model bytes one account may hold, declared uploads and ready models together. Default 20 GiB. */
  accountQuotaBytes: number;
  /** Uploads one account may have in progress (declared, not yet ready). Default 4. */
  maxPendingUploads: number;
}

export const DEFAULT_MODEL_LIMITS: ModelLimits = {
  maxBytes: 2 * 1024 ** 3,
  maxChunkBytes: 64 * 1024 ** 2,
  accountQuotaBytes: 20 * 1024 ** 3,
  maxPendingUploads: 4,
};

/** Fills defaults, rejects unknown keys and values that are not positive integers. */
export function compileModelLimits(raw: Partial<ModelLimits> = {}): ModelLimits {
  for (const key of Object.keys(raw)) {
    if (!(key in DEFAULT_MODEL_LIMITS)) throw new Error(`unknown models option "${key}"; known: ${Object.keys(DEFAULT_MODEL_LIMITS).join(", ")}`);
  }
  const limits = { ...DEFAULT_MODEL_LIMITS, ...raw };
  for (const [key, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`models.${key} must be a positive integer; got ${value}`);
  }
  if (limits.maxBytes > limits.accountQuotaBytes) throw new Error(`models.maxBytes (${limits.maxBytes}) must not exceed models.accountQuotaBytes (${limits.accountQuotaBytes})`);
  return limits;
}

/** Bytes as people read them: "2 GiB", "640 KiB", "17 bytes". */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [["GiB", 1024 ** 3], ["MiB", 1024 ** 2], ["KiB", 1024]] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(2))} ${unit}`;
  }
  return `${bytes} bytes`;
}
