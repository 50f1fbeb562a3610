/**
 * Runs, newest first: name (or id), policy, kind, task, robot, n, rate with its 95% interval,
 * status, created. Filtered by kind, status, policy, task, robot and one metadata key=value
 * (GET /v1/runs?kind=&status=&policy_name=&task=&robot=&metadata[key]=value&limit=&starting_after=);
 * the filters live in the address. A checkbox per row selects runs; "Compare these" opens
 * `#/compare?runs=<id>,<id>` for two or more. While a run on the page is open, the page asks again
 * every 5 s (only while the tab is visible) and updates the rows in place, so the focus and the
 * selection stay where they were.
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
/** Filters as [address and API parameter, label]; metadata is `key=value` in the address too. */
const TEXT_FILTERS = [["policy_name", "Policy"], ["task", "Task"], ["robot", "Robot"], ["metadata", "Metadata"]];

const signedPoints = (x) => `${x > 0 ? "+" : ""}${Number((x * 100).toFixed(1))}`;

/**
 * A run's headline as one line: "83.3% [64.1%, 94.2%]"; a compare or transfer whose result has a
 * headline shows its difference, "+30 points [+12, +46]", as its page leads with it.
 */
export function resultLine(run) {
  const r = run.result;
  if (!r) return OPEN.has(run.status) ? "in progress" : "—";
  const difference = r.headline?.difference;
  if (difference && typeof difference.diff === "number" && Array.isArray(difference.ci)) {
    return `${signedPoints(difference.diff)} points [${signedPoints(difference.ci[0])}, ${signedPoints(difference.ci[1])}]`;
  }
  // A run stopped before any episode has n = 0: no rate to show (its interval would be 0-100%).
  if (r.n === 0) return "—";
  return Array.isArray(r.ci95) ? `${pct(r.success_rate)} [${pct(r.ci95[0])}, ${pct(r.ci95[1])}]` : pct(r.success_rate);
}

/** The policy as the list names it: policy_name, or a compare's policy names. */
export function policyNameOf(run) {
  if (run.policy_name) return run.policy_name;
  const names = [...new Set((run.units ?? []).map((u) => u.policy_name).filter(Boolean))];
  return names.length ? names.join(" vs ") : "—";
}

function cellsOf(run) {
  const units = run.units?.length > 1 ? ` + ${run.units.length - 1} more units` : "";
  return [
    policyNameOf(run),
    run.kind,
    run.resolved_pins?.task ?? run.task ?? "—",
    `${run.resolved_pins?.robot ?? run.robot ?? "—"}${units}`,
    run.result ? String(run.result.n) : "—",
    h("span", { class: "rate-interval" }, resultLine(run)),
    badge(run.status),
    when(run.created),
  ];
}

/** `{key, value}` of a `key=value` metadata filter, or null when it has no key. */
function metadataFilter(text) {
  const at = text.indexOf("=");
  return at > 0 ? { key: text.slice(0, at).trim(), value: text.slice(at + 1) } : null;
}

export async function runsPage(ctx) {
  ctx.setTitle("Runs");
  const filter = { kind: ctx.query.get("kind") ?? "", status: ctx.query.get("status") ?? "" };
  for (const [name] of TEXT_FILTERS) filter[name] = ctx.query.get(name) ?? "";
  const selected = new Set();
  const cursors = [];
  let after = "";
  let timer = null;
  ctx.cleanup(() => clearTimeout(timer));

  const kind = h("select", { id: "filter-kind", name: "kind" }, options([["", "All kinds"], ...KINDS], filter.kind));
  const status = h("select", { id: "filter-status", name: "status" }, options([["", "All statuses"], ...STATUSES], filter.status));
  const texts = Object.fromEntries(TEXT_FILTERS.map(([name]) => [name, h("input", {
    id: `filter-${name}`, name, type: "search", value: filter[name], autocomplete: "off",
    placeholder: name === "metadata" ? "key=value" : name === "robot" ? "so101 or so101@3.11" : name === "task" ? "pick-cube or pick-cube@v1" : "policy name or image",
  })]));
  const body = h("tbody");
  const tableEl = h("table", { class: "runs" },
    h("caption", { class: "sr-only" }, "Runs of the account, newest first"),
    h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, h("span", { class: "sr-only" }, "Select")),
      ["Run", "Policy", "Kind", "Task", "Robot", "n", "Rate (95% interval)", "Status", "Created"].map((x) => h("th", { scope: "col" }, x)))),
    body);
  const empty = h("p", { class: "muted", hidden: true }, "No runs match these filters.");
  const newer = h("button", { type: "button", hidden: true, on: { click: () => { after = cursors.pop() ?? ""; void load(); } } }, "Newer runs");
  const older = h("button", { type: "button", hidden: true, on: { click: () => { cursors.push(after); after = body.lastElementChild?.dataset.run ?? ""; void load(); } } }, "Older runs");
  const compare = h("button", { type: "button", class: "primary", disabled: true, on: { click: () => ctx.navigate(`/compare?runs=${[...selected].join(",")}`) } }, "Compare these");
  const selection = h("span", { class: "muted small", "aria-live": "polite" });
  const errors = errorSlot();
  const live = h("p", { class: "muted small", "aria-live": "polite" });

  function rowOf(run) {
    const box = h("input", {
      type: "checkbox", checked: selected.has(run.id), "aria-label": `Select ${run.name ?? run.id}`,
      on: { change: () => { if (box.checked) selected.add(run.id); else selected.delete(run.id); renderSelection(); } },
    });
    return h("tr", { "data-run": run.id },
      h("td", {}, box),
      h("th", { scope: "row" }, h("a", { href: `#/runs/${run.id}` }, run.name ?? run.id), run.name ? h("div", { class: "muted small" }, run.id) : null),
      cellsOf(run).map((c) => h("td", {}, c)));
  }

  function renderSelection() {
    compare.disabled = selected.size < 2;
    selection.textContent = selected.size ? `${selected.size} selected${selected.size < 2 ? ": select one more to compare" : ""}` : "";
  }

  function applyFilters() {
    filter.kind = kind.value;
    filter.status = status.value;
    for (const [name] of TEXT_FILTERS) filter[name] = texts[name].value.trim();
    const query = new URLSearchParams(Object.entries(filter).filter(([, v]) => v)).toString();
    // Filters live in the URL (shareable, back button) without re-rendering the page.
    history.replaceState(null, "", `#/runs${query ? `?${query}` : ""}`);
    cursors.length = 0;
    after = "";
    void load();
  }
  for (const control of [kind, status, ...Object.values(texts)]) control.addEventListener("change", applyFilters);

  ctx.show(
    h("div", { class: "page-head" },
      h("h1", { tabindex: "-1" }, "Runs"),
      can(ctx.caps, "runs:write") ? h("a", { class: "button primary", href: "#/runs/new" }, "New run") : null),
    h("form", { class: "filters", on: { submit: (e) => { e.preventDefault(); applyFilters(); } } },
      field("Kind", kind), field("Status", status),
      TEXT_FILTERS.map(([name, label]) => field(label, texts[name])),
      h("button", { type: "submit" }, "Filter")),
    errors.element,
    h("div", { class: "actions" }, compare, selection),
    tableEl, empty,
    h("div", { class: "actions" }, newer, older), live);

  async function load({ quiet = false } = {}) {
    clearTimeout(timer);
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    for (const name of ["kind", "status", "policy_name", "task", "robot"]) if (filter[name]) query.set(name, filter[name]);
    const meta = filter.metadata ? metadataFilter(filter.metadata) : null;
    if (filter.metadata && !meta) {
      errors.show(new Error(`The metadata filter must be key=value; got "${filter.metadata}".`));
      return;
    }
    if (meta) query.set(`metadata[${meta.key}]`, meta.value);
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
      // Same run: refresh every cell but the checkbox and the link, so focus and selection stay.
      const cells = cellsOf(run);
      [...row.cells].slice(2).forEach((cell, i) => replace(cell, cells[i]));
      return row;
    });
    if (next.length !== body.rows.length || next.some((row, i) => body.rows[i] !== row)) body.replaceChildren(...next);
    empty.hidden = list.data.length > 0;
    tableEl.hidden = list.data.length === 0;
    newer.hidden = cursors.length === 0 && !after;
    older.hidden = !list.has_more;
  }

  renderSelection();
  await load();
}
