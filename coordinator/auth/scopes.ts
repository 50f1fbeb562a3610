/** The spec's key scopes (section 5). */
export const SCOPES = ["runs:read", "runs:write", "streams:read", "data:purge", "keys:admin", "calibration:export"] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: unknown): value is Scope {
  return typeof value === "string" && (SCOPES as readonly string[]).includes(value);
}
