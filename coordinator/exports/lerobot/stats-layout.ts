/**
 * How LeRobot lays statistics out on disk: `meta/stats.json` (`write_stats`: `json.dump(indent=4)`
 * of the stats as nested lists) and the per-episode `stats/<feature>/<stat>` columns. A vector
 * feature's stats are lists with one value per dimension, an image's are shaped (3, 1, 1), and
 * `count` is a one-element list of integers.
 */
import { STAT_KEYS, type FeatureStats, type StatKey } from "./feature-stats.js";

/** One feature's stats and whether it is a camera (shape (3, 1, 1)). */
export interface NamedStats {
  stats: FeatureStats;
  isImage: boolean;
}

/** The nested-list value LeRobot stores for one statistic. */
export function statValue(entry: NamedStats, key: StatKey): number[] | number[][][] {
  if (key === "count") return [entry.stats.count];
  const values = entry.stats[key];
  return entry.isImage ? values.map((v) => [[v]]) : values;
}

/** Python's `repr` of a float, as `json.dump` writes it: integral values keep a ".0". */
function pythonFloat(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "Infinity" : "-Infinity";
  const text = String(value);
  return Number.isInteger(value) && !text.includes("e") ? `${text}.0` : text;
}

/**
 * `json.dump(value, indent=4)`: the layout of `JSON.stringify(value, null, 4)`, with numbers
 * written as floats wherever `isFloat(path)` says Python holds a float (so that numpy reads them
 * back as float arrays).
 */
export function pythonJson(value: unknown, isFloat: (path: string[]) => boolean, path: string[] = [], depth = 0): string {
  const pad = "    ".repeat(depth + 1);
  const end = "    ".repeat(depth);
  if (typeof value === "number") return isFloat(path) ? pythonFloat(value) : String(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((item) => pad + pythonJson(item, isFloat, path, depth + 1)).join(",\n")}\n${end}]`;
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{}";
    return `{\n${entries.map(([key, item]) => `${pad}${JSON.stringify(key)}: ${pythonJson(item, isFloat, [...path, key], depth + 1)}`).join(",\n")}\n${end}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The text of `meta/stats.json`. */
export function statsJson(features: Map<string, NamedStats>): string {
  const tree: Record<string, Record<string, unknown>> = {};
  for (const [feature, entry] of features) {
    tree[feature] = Object.fromEntries(STAT_KEYS.map((key) => [key, statValue(entry, key)]));
  }
  return pythonJson(tree, (path) => path[1] !== "count");
}
