/**
 * Paper-ready outputs (runs:read; issue 28 item 4, docs/papers.md):
 *
 * - GET /v1/runs/{run_id}/paper/{file}: one completed run's table, figure or citation, a row per
 *   unit (a compare's arms, a matrix's cells, ...; coordinator/reports/paper-rows.ts);
 * - GET /v1/paper/{file}?runs=a,b: a selection of the account's completed runs, a row per run.
 *
 * `file` is one of PAPER_FILES. A run of another account, one not completed, or a pilot: 404 as for
 * the report. Files are sent as attachments named after the run (or the selection's first run and
 * count), so a browser saves them under a useful name.
 */
import { Router, type Response } from "express";
import { authOf } from "../../auth/authenticate.js";
import { AssayError } from "../../errors/assay-error.js";
import { figurePng, figureSvg } from "../../reports/paper-figure.js";
import { paperRowsOfRun, paperRowsOfSelection, runNameOf, type PaperRow, type PaperSource } from "../../reports/paper-rows.js";
import { tableCsv, tableLatex } from "../../reports/paper-table.js";
import { kindWords } from "../../reports/paper-names.js";
import { bibtexEntry, citationText, paperTitle, pinsWords } from "../../reports/paper-words.js";
import { unitHeadingOf } from "../../reports/report-extras.js";
import type { RunRecord } from "../../store/runs-repo.js";
import { isPilotRun } from "../../tasks/pilot.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { PAPER_FILES, PAPER_FILE_NAMES, PAPER_SELECTION_MAX, PaperSelectionQuery, type PaperFile } from "../schemas/paper.js";
import { contentSha256 } from "../send-object.js";
import { parseQuery } from "../validate-request.js";
import { requireRun } from "./runs.js";

const quoted = (value: string, max = 80) => JSON.stringify(value.length > max ? `${value.slice(0, max)}...` : value);

function paperFileOf(file: string): PaperFile {
  if ((PAPER_FILE_NAMES as string[]).includes(file)) return file as PaperFile;
  throw new AssayError("not_found", `no paper file ${quoted(file)}; the files are ${PAPER_FILE_NAMES.join(", ")}`);
}

/** The run, completed and not a pilot, or 404 as for its report. */
async function completedRun(deps: CompiledApiDeps, accountId: string, runId: string): Promise<RunRecord> {
  const run = await requireRun(deps.db, accountId, runId);
  if (isPilotRun(run.plan)) throw new AssayError("not_found", `run ${run.id} is a task pilot: pilot episodes are calibration only and have no paper outputs`, { runId: run.id });
  if (run.status !== "completed" || !run.result || !run.completed) {
    throw new AssayError("not_found", `run ${run.id} is ${run.status}; its table, figure and citation exist once the run has completed`, { runId: run.id });
  }
  return run;
}

/** The ids of `runs=a,b`: 1 to PAPER_SELECTION_MAX distinct ids. */
function selectionIds(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === "") {
    throw new AssayError("contract_validation_failed", `query parameter runs is required: the ids of 1 to ${PAPER_SELECTION_MAX} completed runs, comma-separated (runs=run_a,run_b)`);
  }
  const ids = raw.split(",").map((id) => id.trim());
  if (ids.some((id) => id === "")) throw new AssayError("contract_validation_failed", `query parameter runs must be run ids separated by single commas; got ${quoted(raw)}`);
  if (ids.length > PAPER_SELECTION_MAX) throw new AssayError("contract_validation_failed", `query parameter runs names ${ids.length} runs; a selection holds at most ${PAPER_SELECTION_MAX}`);
  const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
  if (repeated) throw new AssayError("contract_validation_failed", `query parameter runs names run ${quoted(repeated)} twice; name each run once`);
  return ids;
}

/** Sends one paper file as an attachment named `<stem>.<ext>`. */
async function sendPaperFile(res: Response, file: PaperFile, stem: string, sources: readonly PaperSource[], rows: readonly PaperRow[], reportUrl: (runId: string) => string, options: { caption: string; labelId: string; unitHeading: string; title: string }): Promise<void> {
  const [name, ext] = file.split(".");
  let body: string | Buffer;
  switch (file) {
    case "table.csv": body = tableCsv(rows); break;
    case "table.tex": body = tableLatex(rows, options); break;
    case "figure.svg": body = figureSvg(rows, options.title); break;
    case "figure.png": body = await figurePng(figureSvg(rows, options.title)); break;
    case "citation.bib": body = sources.map((s) => bibtexEntry(s, reportUrl(s.run.id))).join("\n"); break;
    case "citation.txt": body = sources.map((s) => `${citationText(s)}\n`).join(""); break;
  }
  res.type(PAPER_FILES[file].type).set("Content-Disposition", `attachment; filename="${stem}-${name}.${ext}"`).set(contentSha256(body)).send(body);
}

export function paperRouter(deps: CompiledApiDeps, router: Router = Router()): Router {
  const reportUrl = (runId: string) => `${deps.urls.baseUrl}/v1/runs/${runId}/report`;

  router.get("/runs/:runId/paper/:file", async (req, res) => {
    const { accountId } = authOf(res);
    const run = await completedRun(deps, accountId, req.params.runId);
    const file = paperFileOf(req.params.file);
    const rows = paperRowsOfRun(run);
    const source: PaperSource = { run, name: runNameOf(run), rows };
    const title = paperTitle(source);
    await sendPaperFile(res, file, `assay-${run.id}`, [source], rows, reportUrl, {
      title, caption: `${title}. Assay ${kindWords(run.kind)} ${run.id}, ${rows[0]?.date ?? ""}; ${pinsWords(rows)}.`, labelId: run.id, unitHeading: unitHeadingOf(run.kind),
    });
  });

  router.get("/paper/:file", async (req, res) => {
    const { accountId } = authOf(res);
    const file = paperFileOf(req.params.file);
    const ids = selectionIds(parseQuery(PaperSelectionQuery, req).runs);
    const runs: RunRecord[] = [];
    for (const id of ids) runs.push(await completedRun(deps, accountId, id));
    const rows = paperRowsOfSelection(runs);
    const sources = runs.map((run, i): PaperSource => ({ run, name: runNameOf(run), rows: [rows[i]] }));
    const title = `Success rates of ${runs.length} Assay runs`;
    const more = runs.length > 1 ? `-and-${runs.length - 1}-more` : "";
    await sendPaperFile(res, file, `assay-${runs[0].id}${more}`, sources, rows, reportUrl, {
      title, caption: `${title}: ${ids.join(", ")}.`, labelId: `${runs[0].id}${more}`, unitHeading: "Run",
    });
  });

  return router;
}
