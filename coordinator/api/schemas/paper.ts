/**
 * Paper-ready outputs (coordinator/api/routes/paper.ts): which files there are, with their media
 * types, and the query naming a selection of runs.
 */
import { z } from "zod";
import { queryText } from "./common.js";

/** Most runs one selection may name. */
export const PAPER_SELECTION_MAX = 20;

/** Each file, its media type, and what it holds. */
export const PAPER_FILES = {
  "table.csv": { type: "text/csv; charset=utf-8", description: "the rates per unit (or per run): run_id, unit, kind, task, robot, environment, policy, n, successes, success_rate, ci95_low, ci95_high, interval_method, date" },
  "table.tex": { type: "application/x-tex; charset=utf-8", description: "a LaTeX table (booktabs) with a caption and a \\label: n, successes, success rate and 95% interval, percentages with one decimal" },
  "figure.svg": { type: "image/svg+xml; charset=utf-8", description: "the rates as dots with their 95% intervals, labels as text" },
  "figure.png": { type: "image/png", description: "the same figure rendered at 2x (1280 pixels wide)" },
  "citation.bib": { type: "application/x-bibtex; charset=utf-8", description: "a BibTeX @misc entry per run" },
  "citation.txt": { type: "text/plain; charset=utf-8", description: "a one-line citation per run: task revision, robot pins, environment, run id, date, rates with n and intervals" },
} as const;

export type PaperFile = keyof typeof PAPER_FILES;
export const PAPER_FILE_NAMES = Object.keys(PAPER_FILES) as PaperFile[];

/** Query of GET /v1/paper/{file}. */
export const PaperSelectionQuery = z.object({
  runs: queryText("runs", `comma-separated ids of 1 to ${PAPER_SELECTION_MAX} completed runs of the account, e.g. runs=run_a,run_b; one row per run, in this order`),
});

/** The OpenAPI responses of a paper file: every media type it may answer with. */
export const PAPER_MEDIA: Record<string, string> = Object.fromEntries(
  Object.values(PAPER_FILES).map((f) => [f.type.split(";")[0], f.description]),
);
