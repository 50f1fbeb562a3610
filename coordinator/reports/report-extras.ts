/**
 * What the PDF report prints beyond the JSON Report (issue 28 item 4): its title, the rows of its
 * per-unit table, the one-line citation, the kind's own sentences (a compare's difference, a
 * transfer's gap), the stage funnel, a filmstrip of failures and the methods paragraph. Built on the
 * coordinator's loop from the store (bounded: one read of the run's episodes, at most
 * FILMSTRIP_EPISODES recordings), then handed with the Report to the PDF renderer (a worker thread),
 * so it holds data only (no functions, no handles).
 */
import type { Db } from "../store/database.js";
import { readEpisodeRecords } from "../runs/episode-records.js";
import type { RunRecord } from "../store/runs-repo.js";
import type { ObjectStore } from "../storage/object-store.js";
import { chooseFilmstrip, readFilmstrip, type FilmstripChoice, type FilmstripEpisode } from "./filmstrip.js";
import { methodsText, type MethodsText } from "./methods-text.js";
import { kindWords } from "./paper-names.js";
import { paperRowsOfRun, runNameOf, type PaperRow } from "./paper-rows.js";
import { citationText, paperTitle } from "./paper-words.js";
import { stageFunnelOf, type StageFunnel } from "./stage-funnel.js";
import { kindTraitsOf } from "../kinds/registry.js";

export interface ReportExtras {
  title: string;
  /** "Comparison run_X, completed 2026-11-27". */
  subtitle: string;
  citation: string;
  rows: PaperRow[];
  /** What the first column of the table is headed ("Policy", "Cell", "Unit"). */
  unitHeading: string;
  /** What the headline rate is of, for kinds with several units (`result.population.description`). */
  population: string | null;
  /** The kind's own sentences for the summary page (a compare's difference, a transfer's gap), verbatim from the Result. */
  kindStatements: string[];
  funnel: StageFunnel;
  filmstrip: FilmstripEpisode[];
  methods: MethodsText;
}

/** The first column's heading for a run's rows. */
export function unitHeadingOf(kind: string): string {
  return kindTraitsOf(kind)?.unitHeading ?? "Run";
}

/** The Result's sentences that state the kind's answer, when it has them. */
function kindStatementsOf(result: Record<string, any>): string[] {
  const out: string[] = [];
  for (const section of [result.comparison, result.gap]) {
    if (typeof section?.statement === "string") out.push(section.statement);
    if (typeof section?.these_cells?.statement === "string") out.push(section.these_cells.statement);
    if (section?.mcnemar && typeof section.mcnemar.p_value === "number") {
      out.push(`Exact McNemar test over ${section.mcnemar.n_discordant} discordant pairs: p = ${Number(section.mcnemar.p_value).toPrecision(3)}.`);
    }
  }
  if (Array.isArray(result.regressions)) out.push(`${result.regressions.length} regression(s) against the previous comparable matrix (Holm-adjusted).`);
  return out;
}

/** The parts of the extras that need only the store (cheap); `filmstripOf` reads the recordings. */
export interface ReportExtrasPlan {
  extras: Omit<ReportExtras, "filmstrip">;
  filmstrip: FilmstripChoice[];
}

/** Plans a completed run's extras: everything but the filmstrip's frames, and which failures it shows. */
export async function planReportExtras(db: Db, run: RunRecord): Promise<ReportExtrasPlan> {
  const result = (run.result ?? {}) as Record<string, any>;
  const episodes = await readEpisodeRecords(db, run.id);
  const rows = paperRowsOfRun(run);
  const source = { run, name: runNameOf(run), rows };
  const diff = (result.comparison?.method ?? result.gap?.method) as string | undefined;
  const methods = methodsText({
    intervalMethods: [...new Set(rows.map((r) => r.interval_method))],
    prior: result.cells?.prior,
    ...(diff ? { differenceMethod: diff } : {}),
    mcnemar: Boolean(result.comparison?.mcnemar),
    holm: Array.isArray(result.cells_compared) && result.cells_compared.length > 0,
    diagnostics: true,
  });
  return {
    extras: {
      title: paperTitle(source),
      subtitle: `${kindWords(run.kind).replace(/^./, (c) => c.toUpperCase())} ${run.id}, completed ${(run.completed ?? run.created).slice(0, 10)}`,
      citation: citationText(source),
      rows,
      unitHeading: unitHeadingOf(run.kind),
      population: Array.isArray(result.units) && result.units.length > 1 && typeof result.population?.description === "string" ? result.population.description : null,
      kindStatements: kindStatementsOf(result),
      funnel: stageFunnelOf(run.result, episodes),
      methods,
    },
    filmstrip: await chooseFilmstrip(db, episodes),
  };
}

/** The extras with the filmstrip's frames read from the stored recordings. */
export async function buildReportExtras(plan: ReportExtrasPlan, objects: ObjectStore): Promise<ReportExtras> {
  return { ...plan.extras, filmstrip: await readFilmstrip(objects, plan.filmstrip) };
}

/** The key a rendered PDF is kept under: the run at its completion, and the recordings its filmstrip shows. */
export function reportPdfKey(run: RunRecord, plan: ReportExtrasPlan): string {
  return `${run.id}@${run.completed ?? ""}:${plan.filmstrip.map((c) => `${c.episode.id}/${c.mcap.sha256.slice(0, 12)}`).join(",")}`;
}
