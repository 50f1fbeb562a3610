/**
 * The agent config's field readers: each takes a value from an object, fills its default and checks it,
 * throwing a message that names the key (with its path, `where`) and quotes what was given.
 */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function rejectUnknown(obj: Record<string, unknown>, known: string[], where: string): void {
  for (const key of Object.keys(obj)) {
    if (!known.includes(key)) {
      throw new Error(`unknown agent config key "${where}${key}"; known keys: ${known.join(", ")}`);
    }
  }
}

export function text(obj: Record<string, unknown>, key: string, fallback?: string, where = ""): string {
  const value = obj[key] ?? fallback;
  if (typeof value !== "string" || value.trim() === "") {
    throw new Error(`agent config "${where}${key}" must be a non-empty string; got ${JSON.stringify(value)}`);
  }
  return value;
}

export function number(obj: Record<string, unknown>, key: string, fallback: number, where: string, min: number, max = Infinity): number {
  const value = obj[key] ?? fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
    throw new Error(`agent config "${where}${key}" must be a number in [${min}, ${max}]; got ${JSON.stringify(value)}`);
  }
  return value;
}

export function integer(obj: Record<string, unknown>, key: string, fallback: number, where: string, min: number, max: number): number {
  const value = number(obj, key, fallback, where, min, max);
  if (!Number.isInteger(value)) throw new Error(`agent config "${where}${key}" must be an integer; got ${value}`);
  return value;
}

export function section(value: unknown, key: string, known: string[]): Record<string, unknown> {
  if (!isObject(value)) throw new Error(`agent config "${key}" must be an object; got ${JSON.stringify(value)}`);
  rejectUnknown(value, known, `${key}.`);
  return value;
}

export function oneOf<T extends string>(obj: Record<string, unknown>, key: string, where: string, allowed: readonly T[], fallback?: T): T {
  const value = obj[key] ?? fallback;
  if (!allowed.includes(value as T)) throw new Error(`agent config "${where}${key}" must be one of ${allowed.map((a) => `"${a}"`).join(", ")}; got ${JSON.stringify(value)}`);
  return value as T;
}
