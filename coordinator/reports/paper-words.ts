/**
 * What a paper says about a run, in words a reader of the paper knows (issue 28 item 4): a title, a
 * one-line citation and a BibTeX entry naming the frozen task revision, the robot pins
 * (model@firmware), the environment, the run's id and its date; interval methods by their names in
 * the literature, not the API's identifiers.
 *
 *     Assay comparison run_X (2026-11-27): expert vs novice; task pick-cube@v1 (frozen revision);
 *     robot so101@3.11; environment tabletop@1; expert 100.0% [83.9%, 100.0%] (n = 20); novice ...
 */
import { intervalWords, kindWords, percent } from "./paper-names.js";
import { latexEscape } from "./paper-table.js";
import { policyNameOf, runNameOf, type PaperRow, type PaperSource } from "./paper-rows.js";
import { kindModule } from "../kinds/registry.js";

const distinct = (values: readonly string[]) => [...new Set(values.filter((v) => v !== ""))];

/** The run's policies ("expert vs novice" for a compare), or null when none is named. */
function policiesWords(source: PaperSource): string | null {
  const fromRows = distinct(source.rows.map((r) => r.policy ?? ""));
  const policies = fromRows.length > 0 ? fromRows : distinct([policyNameOf(source.run) ?? ""]);
  return policies.length > 0 ? policies.join(kindModule(source.run.kind).traits.comparesPolicies ? " vs " : ", ") : null;
}

/** The run's title: its name, else its policies on its task ("expert vs novice on pick-cube@v1"). */
export function paperTitle(source: PaperSource): string {
  const name = source.name ?? runNameOf(source.run);
  if (name) return name;
  const tasks = distinct(source.rows.map((r) => r.task)).join(", ");
  const policies = policiesWords(source);
  return policies ? `${policies} on ${tasks}` : `${capitalize(kindWords(source.run.kind))} of ${tasks}`;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** "task pick-cube@v1 (frozen revision); robot so101@3.11; environment tabletop@1" for the rows' pins. */
export function pinsWords(rows: readonly PaperRow[]): string {
  const tasks = distinct(rows.map((r) => r.task));
  const robots = distinct(rows.map((r) => r.robot));
  const environments = distinct(rows.map((r) => r.environment));
  const list = (noun: string, values: string[]) => `${noun}${values.length > 1 ? "s" : ""} ${values.join(", ")}`;
  return [`${list("task", tasks)} (frozen revision${tasks.length > 1 ? "s" : ""})`, list("robot", robots), list("environment", environments)].join("; ");
}

/** A row's figure: "100.0% [83.9%, 100.0%] (n = 20)". */
export function rateWords(row: Pick<PaperRow, "n" | "success_rate" | "ci95">): string {
  return `${percent(row.success_rate)} [${percent(row.ci95[0])}, ${percent(row.ci95[1])}] (n = ${row.n})`;
}

/** Beyond this many rows a citation names the count and points to the table. */
const CITED_ROWS = 4;

/** The one-line citation of a run (no line break; every figure with its n and 95% interval). */
export function citationText(source: PaperSource): string {
  const { run, rows } = source;
  const date = rows[0]?.date ?? (run.completed ?? run.created).slice(0, 10);
  const methods = distinct(rows.map((r) => r.interval_method)).map(intervalWords).join("; ");
  const figures = rows.length === 1
    ? `success ${rateWords(rows[0])}`
    : rows.length <= CITED_ROWS
      ? rows.map((r) => `${r.label} ${rateWords(r)}`).join("; ")
      : `${rows.length} units, rates with their intervals in the accompanying table`;
  // The pins name the task; the subject is the run's name or its policies, so the task is said once.
  const subject = source.name ?? runNameOf(run) ?? policiesWords(source);
  const text = `Assay ${kindWords(run.kind)} ${run.id} (${date}): ${subject ? `${subject}; ` : ""}${pinsWords(rows)}; ${figures}; 95% intervals, ${methods}.`;
  return text.replace(/\s+/g, " ");
}

/** A BibTeX key from the run id: letters, digits and underscores. */
export function bibtexKey(runId: string): string {
  return `assay_${runId.replace(/^run_/, "").replace(/[^A-Za-z0-9]+/g, "_")}`;
}

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/**
 * The run as a BibTeX `@misc` entry: title (braced so styles keep its case), Assay as the
 * corporate author, year and month of completion, the citation line as `note`, the report's URL.
 */
export function bibtexEntry(source: PaperSource, reportUrl: string): string {
  const { run, rows } = source;
  const date = rows[0]?.date ?? (run.completed ?? run.created).slice(0, 10);
  const month = MONTHS[Number(date.slice(5, 7)) - 1] ?? "jan";
  const fields: Array<[string, string]> = [
    // Double braces keep the title's and the corporate author's case and words in every style.
    ["title", `{${latexEscape(`Assay ${kindWords(run.kind)} ${run.id}: ${paperTitle(source)}`)}}`],
    ["author", "{Assay}"],
    ["year", date.slice(0, 4)],
    ["month", month],
    ["howpublished", `Assay robot evaluation report ${latexEscape(run.id)}, completed ${date}`],
    ["note", latexEscape(citationText(source))],
    ["url", reportUrl.replace(/[{}\\%#\s]/g, (c) => encodeURIComponent(c))],
  ];
  const width = Math.max(...fields.map(([name]) => name.length));
  const body = fields.map(([name, value]) => `  ${name.padEnd(width)} = ${/^\d+$|^[a-z]{3}$/.test(value) ? value : `{${value}}`}`);
  return `@misc{${bibtexKey(run.id)},\n${body.join(",\n")}\n}\n`;
}
