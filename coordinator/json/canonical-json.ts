/**
 * Canonical JSON: object keys sorted recursively by code unit, no whitespace, undefined object
 * members dropped (undefined array items written as null). Two values that are equal as JSON have
 * the same canonical text, so it serves both to compare request bodies (Idempotency-Key replays,
 * quotes) and as the exact bytes of a signature (coordinator/tasks/task-signing.ts).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`cannot encode ${typeof value} as canonical JSON`);
    return text;
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}
