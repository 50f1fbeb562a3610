/**
 * Runs, newest first, filtered by kind and status (GET /v1/runs?kind=&status=&limit=&starting_after=).
 * While a run on the page is open, the page asks again every 5 s (only while the tab is visible) and
 * updates the rows in place, so the focus stays where it was.
 */
import { api } from "../api.js";
import { field, h, options, replace } from "../dom.js";
import { pct, when } from "../format.js";
import { can } from "../session.js";
import { badge, errorSlot } from "../ui.js";

const KINDS = ["run", "compare", "matrix", "transfer", "eval", "threshold", "verify"];
const STATUSES = ["queued", "scheduling", "running", "completed", "failed", "stopped"];
const OPEN = new Set(["queued", "scheduling", "running"]);
const PAGE_SIZE = 20;
const REFRESH_MS = 5000;

/** A run's headline as one line: "83.3% (n = 6)". */
export function resultLine(run) {
  const r = run.result;
  if (!r) return OPEN.has(run.status) ? "in progress" : "—";
  return `${pct(r.success_rate)} (n = ${r.n})`;
}

function cellsOf(run) {
  const units = run.units?.length > 1 ? ` + ${run.units.length - 1} more units` : "";
  return [
    run.kind,
    badge(run.status),
    `${run.resolved_pins?.robot ?? "—"}${units}`,
    run.resolved_pins?.task ?? run.task ?? "—",
    String(run.episodes ?? "—"),
    resultLine(run),
    when(run.created),
  ];
}

function rowOf(run) {
  return h("tr", { "data-run": run.id },
    h("th", { scope: "row" }, h("a", { href: `#/runs/${run.id}` }, run.id)),
    cellsOf(run).map((c) => h("td", {}, c)));
}

export async function runsPage(ctx) {
  ctx.setTitle("Runs");
  const filter = { kind: ctx.query.get("kind") ?? "", status: ctx.query.get("status") ?? "" };
  const cursors = [];
  let after = "";
  let timer = null;
  ctx.cleanup(() => clearTimeout(timer));

  const kind = h("select", { id: "filter-kind", name: "kind" }, options([["", "All kinds"], ...KINDS], filter.kind));
  const status = h("select", { id: "filter-status", name: "status" }, options([["", "All statuses"], ...STATUSES], filter.status));
  const body = h("tbody");
  const tableEl = h("table", { class: "runs" },
    h("caption", { class: "sr-only" }, "Runs of the account, newest first"),
    h("thead", {}, h("tr", {}, ["Run", "Kind", "Status", "Robot", "Task", "Episodes", "Result", "Created"].map((x) => h("th", { scope: "col" }, x)))),
    body);
  const empty = h("p", { class: "muted", hidden: true }, "No runs match these filters.");
  const newer = h("button", { type: "button", hidden: true, on: { click: () => { after = cursors.pop() ?? ""; void load(); } } }, "Newer runs");
  const older = h("button", { type: "button", hidden: true, on: { click: () => { cursors.push(after); after = body.lastElementChild?.dataset.run ?? ""; void load(); } } }, "Older runs");
  const errors = errorSlot();
  const live = h("p", { class: "muted small", "aria-live": "polite" });

  for (const select of [kind, status]) {
    select.addEventListener("change", () => {
      filter.kind = kind.value;
      filter.status = status.value;
      const query = new URLSearchParams(Object.entries(filter).filter(([, v]) => v)).toString();
      // Filters live in the URL (shareable, back button) without re-rendering the page.
      history.replaceState(null, "", `#/runs${query ? `?${query}` : ""}`);
      cursors.length = 0;
      after = "";
      void load();
    });
  }

  ctx.show(
    h("div", { class: "page-head" },
      h("h1", { tabindex: "-1" }, "Runs"),
      can(ctx.caps, "runs:write") ? h("a", { class: "button primary", href: "#/runs/new" }, "New run") : null),
    h("form", { class: "filters", on: { submit: (e) => e.preventDefault() } }, field("Kind", kind), field("Status", status)),
    errors.element, tableEl, empty,
    h("div", { class: "actions" }, newer, older), live);

  async function load({ quiet = false } = {}) {
    clearTimeout(timer);
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (filter.kind) query.set("kind", filter.kind);
    if (filter.status) query.set("status", filter.status);
    if (after) query.set("starting_after", after);
    try {
      const list = await api(`/v1/runs?${query}`, { signal: ctx.signal });
      errors.clear();
      render(list, quiet);
      const anyOpen = list.data.some((run) => OPEN.has(run.status));
      live.textContent = anyOpen ? "Open runs on this page update every few seconds." : "";
      if (anyOpen) timer = setTimeout(refresh, REFRESH_MS);
    } catch (error) {
      if (ctx.signal.aborted) return;
      errors.show(error);
    }
  }

  function refresh() {
    if (document.visibilityState === "visible") void load({ quiet: true });
    else document.addEventListener("visibilitychange", refresh, { once: true });
  }

  function render(list, quiet) {
    const rows = new Map([...body.rows].map((row) => [row.dataset.run, row]));
    const next = list.data.map((run) => {
      const row = rows.get(run.id);
      if (!row || !quiet) return rowOf(run);
      // Same run: refresh every cell but the link, so a focused link keeps its focus.
      const cells = cellsOf(run);
      [...row.cells].slice(1).forEach((cell, i) => replace(cell, cells[i]));
      return row;
    });
    if (next.length !== body.rows.length || next.some((row, i) => body.rows[i] !== row)) body.replaceChildren(...next);
    empty.hidden = list.data.length > 0;
    tableEl.hidden = list.data.length === 0;
    newer.hidden = cursors.length === 0 && !after;
    older.hidden = !list.has_more;
  }

  await load();
}
