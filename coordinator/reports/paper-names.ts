/**
 * Names a paper's reader knows, for what the API calls by identifiers: a run's kind as a noun
 * ("comparison"), an interval method by its name in the literature ("Wilson score"), a rate as a
 * percentage with one decimal. A leaf: the paper's table, words and figure all use it.
 */

/** The kind as a noun for a reader ("Assay comparison run_X"). */
const KIND_WORDS: Record<string, string> = {
  run: "evaluation",
  compare: "comparison",
  matrix: "matrix evaluation",
  transfer: "transfer evaluation",
  eval: "suite evaluation",
  verify: "sim-to-real verification",
  threshold: "threshold test",
};

export function kindWords(kind: string): string {
  return KIND_WORDS[kind] ?? "evaluation";
}

/** An interval method by the name a statistician would use. */
const INTERVAL_WORDS: Record<string, string> = {
  "beta-binomial-posterior": "beta-binomial posterior over cells",
  wilson: "Wilson score",
  "stratified-wilson": "stratified Wilson",
  "clopper-pearson": "Clopper-Pearson",
};

export function intervalWords(method: string): string {
  return INTERVAL_WORDS[method] ?? method.replaceAll("-", " ");
}

/** A rate as a percentage with one decimal: 0.8413 -> "84.1%" ("84.1\%" for LaTeX). */
export function percent(x: number, latex = false): string {
  return `${(x * 100).toFixed(1)}${latex ? "\\%" : "%"}`;
}
