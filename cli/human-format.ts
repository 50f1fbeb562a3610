/**
 * Human output: short aligned tables, dates in local time, rates with their intervals, sizes. Used
 * only without --json (which prints the API's JSON as it came).
 */

export interface Column {
  header: string;
  /** Right-align numbers. */
  align?: "left" | "right";
}

/** Rows under a header, each column as wide as its widest cell, two spaces apart; no trailing spaces. */
export function table(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((column, i) => Math.max(column.header.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, i) => (columns[i].align === "right" ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join("  ").trimEnd();
  return [line(columns.map((c) => c.header)), ...rows.map(line)].join("\n");
}

/** `label  value` lines with the labels padded to one width; rows with an undefined value are left out. */
export function fields(rows: readonly (readonly [string, string | undefined])[]): string {
  const shown = rows.filter((row): row is [string, string] => row[1] !== undefined);
  const width = Math.max(0, ...shown.map(([label]) => label.length));
  return shown.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join("\n");
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/** An API timestamp in the machine's local time, `2026-11-22 14:05:09`; "-" for none. */
export function localTime(iso: unknown): string {
  if (typeof iso !== "string") return "-";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.getFullYear()}-${pad2(date.getMonth() + 1)}-${pad2(date.getDate())} ${pad2(date.getHours())}:${pad2(date.getMinutes())}:${pad2(date.getSeconds())}`;
}

/** A proportion with two decimals (`0.85`); "-" when unknown. */
export function rate(value: unknown): string {
  return typeof value === "number" && Number.isFinite(value) ? value.toFixed(2) : "-";
}

/** An interval `[0.64, 0.95]`; "-" when unknown. */
export function interval(ci: unknown): string {
  return Array.isArray(ci) && ci.length === 2 ? `[${rate(ci[0])}, ${rate(ci[1])}]` : "-";
}

/** A Result's headline: `n 20, success rate 0.85 [0.64, 0.95] (wilson)`. */
export function resultLine(result: { n?: unknown; success_rate?: unknown; ci95?: unknown; interval_method?: unknown }): string {
  const method = typeof result.interval_method === "string" ? ` (${result.interval_method}, 95%)` : " (95%)";
  return `n ${String(result.n ?? "-")}, success rate ${rate(result.success_rate)} ${interval(result.ci95)}${method}`;
}

/** US dollars with cents: `$3.67`. */
export function usd(value: unknown): string {
  return typeof value === "number" ? `$${value.toFixed(2)}` : "-";
}

/** Hours as the API meters them (6 decimals at most, trailing zeros dropped). */
export function hours(value: unknown): string {
  return typeof value === "number" ? `${Number(value.toFixed(6))} h` : "-";
}

/** A duration in seconds, one decimal: `12.4 s`. */
export function seconds(value: unknown): string {
  return typeof value === "number" ? `${value.toFixed(1)} s` : "-";
}

/** Bytes in the unit that reads best: `812 B`, `4.2 kB`, `31.0 MB` (powers of 1000). */
export function byteSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ["kB", "MB", "GB", "TB"];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
