/**
 * A requested perturbation schedule in words for the PDF report, as a reader of a methods section
 * wants it: `lighting nominal, dim; distractors standard; layout jitter 20 mm; seed 7`, and per unit
 * for an eval run's suite schedules (`unit a: ...; unit b: ...`). Field names come from the request
 * (spec: `layout_jitter_mm`, `lighting`, `distractors`, `seed`; others are shown the same way), so a
 * field added later is still printed, never dropped. The JSON report keeps the raw object.
 */

const MAX_WORDS_CHARS = 600;

/** `layout_jitter_mm` -> `layout jitter` with unit `mm`; other names lose their underscores. */
function fieldWords(key: string): { name: string; unit: string } {
  const unit = /_(mm|m|deg|rad|s|ms|pct)$/.exec(key)?.[1] ?? "";
  const name = (unit ? key.slice(0, -unit.length - 1) : key).replace(/_/g, " ");
  return { name, unit: unit === "pct" ? "%" : unit };
}

function valueWords(value: unknown, unit: string): string {
  if (value === null || value === undefined) return "none";
  if (Array.isArray(value)) return value.length ? value.map((v) => valueWords(v, unit)).join(", ") : "none";
  if (typeof value === "object") return `(${objectWords(value as Record<string, unknown>)})`;
  const text = String(value);
  return unit ? `${text}${unit === "%" ? "" : " "}${unit}` : text;
}

function objectWords(value: Record<string, unknown>): string {
  return Object.entries(value)
    .filter(([key]) => key !== "unit")
    .map(([key, v]) => {
      const { name, unit } = fieldWords(key);
      return `${name} ${valueWords(v, unit)}`;
    })
    .join("; ");
}

/** The schedule as requested, in words; "none (the task's nominal conditions)" when nothing was asked. */
export function requestedPerturbationWords(requested: unknown): string {
  let words: string;
  if (requested === null || requested === undefined || (typeof requested === "object" && !Array.isArray(requested) && Object.keys(requested).length === 0)) {
    words = "none (the task's nominal conditions)";
  } else if (Array.isArray(requested)) {
    words = requested
      .map((schedule) => {
        const unit = (schedule as { unit?: unknown })?.unit;
        const text = typeof schedule === "object" && schedule !== null ? objectWords(schedule as Record<string, unknown>) : valueWords(schedule, "");
        return typeof unit === "string" ? `unit ${unit}: ${text || "nominal"}` : text;
      })
      .join("; ");
  } else if (typeof requested === "object") {
    words = objectWords(requested as Record<string, unknown>);
  } else {
    words = String(requested);
  }
  return words.length > MAX_WORDS_CHARS ? `${words.slice(0, MAX_WORDS_CHARS - 1)}…` : words;
}
