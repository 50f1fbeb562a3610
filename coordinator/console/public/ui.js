/** Pieces several pages share: API errors in plain words, the interval bar, status badges, buttons that confirm. */
import { ApiError } from "./api.js";
import { h, svg } from "./dom.js";
import { pct } from "./format.js";

/** What each error code means for the person at the page (the API's message says the specifics). */
const PLAIN = {
  network: "The coordinator could not be reached.",
  invalid_api_key: "The API key was not accepted.",
  insufficient_scope: "This API key is not allowed to do that.",
  not_found: "Not found.",
  publish_forbidden: "Publishing to the leaderboard is not enabled for this account.",
  rate_limited: "Too many requests in a short time. Wait a moment and try again.",
  contract_validation_failed: "The request was not accepted as sent.",
  firmware_pin_unavailable: "No cell has that robot and firmware installed.",
  environment_unavailable: "That environment is not available for this robot.",
  task_unknown: "That task is unknown, or not frozen yet.",
  scenario_format_invalid: "The scenarios could not be read.",
  episodes_invalid: "The number of episodes is not valid.",
  quote_expired: "The quote has expired. Get a new quote.",
  budget_exceeded: "The run reached its budget and was stopped.",
  monthly_budget_exceeded: "The account's monthly budget is used up.",
  queue_timeout: "The run waited too long for a free cell and was stopped.",
  policy_endpoint_timeout: "The policy endpoint did not answer in time.",
  estop_triggered: "An emergency stop was pressed.",
  retention_expired: "The data is gone: it passed its retention period or was purged.",
  internal_error: "The coordinator failed on this request. It was logged; try again later.",
};

/** Something the person typed that the console can tell is wrong before asking the API. */
export class FormError extends Error {}

/** An error as a page shows it: what it means, what the API said, and where it is documented. */
export function errorBox(error) {
  if (error instanceof FormError) {
    return h("div", { class: "error", role: "alert" }, h("p", { class: "error-title" }, "Please check the form."), h("p", {}, error.message));
  }
  if (!(error instanceof ApiError)) {
    return h("div", { class: "error", role: "alert" }, h("p", { class: "error-title" }, "Something went wrong in the console."), h("p", {}, String(error?.message ?? error)));
  }
  return h("div", { class: "error", role: "alert" },
    h("p", { class: "error-title" }, PLAIN[error.code] ?? `The request failed (HTTP ${error.status}).`),
    h("p", { class: "error-message" }, error.message),
    h("p", { class: "error-meta" },
      error.docUrl ? h("a", { href: error.docUrl, target: "_blank", rel: "noopener" }, `What “${error.code}” means`) : `Code ${error.code}`,
      error.status ? ` · HTTP ${error.status}` : "",
      error.runId ? ` · run ${error.runId}` : ""));
}

/** A place for a form's or a section's error: `show(error)` fills it, `clear()` empties it. */
export function errorSlot() {
  const element = h("div", { class: "error-slot" });
  return {
    element,
    show(error) { element.replaceChildren(errorBox(error)); },
    clear() { element.replaceChildren(); },
  };
}

/**
 * A success rate as the API means it to be read: `n` beside the rate, the 95% interval drawn as a
 * bar over 0..100% with the rate marked, and the numbers in words for screen readers.
 */
export function rateBar(summary, label) {
  if (!summary) return h("p", { class: "muted" }, "no rate yet");
  const { n, success_rate: rate, ci95, interval_method: method } = summary;
  const [lo, hi] = ci95 ?? [0, 1];
  const words = `${label ? `${label}: ` : ""}success ${pct(rate)}, n = ${n}, 95% interval ${pct(lo)} to ${pct(hi)} (${method})`;
  const bar = svg("svg", { class: "bar", viewBox: "0 0 100 12", preserveAspectRatio: "none", "aria-hidden": "true", focusable: "false" },
    svg("rect", { class: "bar-track", x: 0, y: 5, width: 100, height: 2 }),
    [0, 25, 50, 75, 100].map((x) => svg("rect", { class: "bar-tick", x: Math.min(99.7, x), y: 3, width: 0.3, height: 6 })),
    svg("rect", { class: "bar-ci", x: lo * 100, y: 2, width: Math.max(0.4, (hi - lo) * 100), height: 8 }),
    svg("rect", { class: "bar-rate", x: Math.min(99.2, Math.max(0, rate * 100 - 0.4)), y: 0, width: 0.8, height: 12 }));
  return h("div", { class: "rate", role: "group", "aria-label": words },
    label ? h("span", { class: "rate-label" }, label) : null,
    h("span", { class: "rate-n" }, `n = ${n}`),
    h("span", { class: "rate-value" }, pct(rate)),
    h("span", { class: "rate-bar" }, bar),
    h("span", { class: "rate-ci" }, `95% CI ${pct(lo)} – ${pct(hi)}`),
    h("span", { class: "rate-method" }, method));
}

/** A run's, cell's or export's status as a coloured badge (the word is always shown). */
export function badge(status) {
  return h("span", { class: `badge badge-${String(status).replace(/[^a-z_-]/g, "")}` }, status);
}

/**
 * Runs `action` with the button disabled and marked busy, so a double click does nothing twice.
 * Errors go to `slot` (an errorSlot) when given, else are rethrown.
 */
export async function busy(button, action, slot) {
  if (button.disabled) return undefined;
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  slot?.clear();
  try {
    return await action();
  } catch (error) {
    if (!slot) throw error;
    slot.show(error);
    return undefined;
  } finally {
    button.disabled = false;
    button.removeAttribute("aria-busy");
  }
}

/**
 * A destructive action in two steps: `label` turns into "<question> [confirm] [cancel]"; the focus
 * goes to the confirm button, Escape or cancel goes back.
 */
export function confirmButton({ label, question, confirm, action, slot, disabled = false, title }) {
  const wrap = h("span", { class: "confirm" });
  const first = h("button", { type: "button", class: "danger", disabled, title, on: { click: ask } }, label);
  wrap.append(first);
  const onKey = (e) => { if (e.key === "Escape") back(); };
  function back() {
    wrap.removeEventListener("keydown", onKey);
    wrap.replaceChildren(first);
    first.focus();
  }
  function ask() {
    const yes = h("button", { type: "button", class: "danger", on: { click: () => busy(yes, async () => { await action(); }, slot) } }, confirm);
    const no = h("button", { type: "button", on: { click: back } }, "Cancel");
    wrap.replaceChildren(h("span", { class: "question" }, question), " ", yes, " ", no);
    wrap.addEventListener("keydown", onKey);
    yes.focus();
  }
  return wrap;
}

/** Saves a Blob as a file through a temporary link (the key never appears in a URL). */
export function saveBlob(blob, fileName) {
  const url = URL.createObjectURL(blob);
  const link = h("a", { href: url, download: fileName, class: "hidden" });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** A table with a caption and column headers; `rows` are arrays of cells (nodes or text). */
export function table(caption, headers, rows, { empty = "Nothing here yet." } = {}) {
  if (rows.length === 0) return h("p", { class: "muted" }, empty);
  return h("table", {},
    caption ? h("caption", {}, caption) : null,
    h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((c) => h("td", {}, c))))));
}

/** A JSON value as preformatted text. */
export function jsonBlock(value) {
  return h("pre", { class: "json" }, JSON.stringify(value, null, 2));
}
