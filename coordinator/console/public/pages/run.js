/**
 * One run: live progress from its event stream, the live camera of the cell running it, the result
 * (n, rate and interval bar, stages, cells, failure clusters, cost and meters), the report and
 * exports once completed, and the episodes with their videos. A pilot run is shown the same way.
 */
import { api } from "../api.js";
import { facts, h, replace } from "../dom.js";
import { when } from "../format.js";
import { liveCamera } from "../live-camera.js";
import { TERMINAL, watchRun } from "../run-watch.js";
import { can } from "../session.js";
import { badge, confirmButton, errorSlot } from "../ui.js";
import { episodeViewer } from "./episode-viewer.js";
import { failureGrid } from "./failure-grid.js";
import { episodesSection } from "./run-episodes.js";
import { exportsSection, reportSection } from "./run-exports.js";
import { resultSections } from "./run-result.js";
import { funnelSection } from "./stage-funnel.js";

/** How a policy reads in one line. */
export function policyLine(policy) {
  if (!policy) return "—";
  if (policy.type === "container") return `container ${policy.image}`;
  if (policy.type === "checkpoint") return `checkpoint ${policy.hf} (${policy.runtime})`;
  if (policy.type === "endpoint") return `endpoint ${policy.url}${policy.protocol ? ` (${policy.protocol})` : ""}`;
  return policy.type;
}

/** The run's name, its policy's name(s) and its metadata, under the heading (named runs). */
function labelsBlock(run) {
  const policies = run.policy_name ?? [...new Set((run.units ?? []).map((u) => u.policy_name).filter(Boolean))].join(" vs ");
  const metadata = Object.entries(run.metadata ?? {});
  return h("div", { class: "run-labels" },
    // A named run's heading is its name; its id stays in sight (and in the address) just below.
    run.name ? h("p", { class: "run-id muted" }, `Run ${run.id}`) : null,
    facts([
      ["Policy name", policies || null],
      ["Metadata", metadata.length ? h("ul", { class: "metadata" }, metadata.map(([key, value]) => h("li", {}, h("code", {}, key), " = ", value))) : null],
    ]));
}

/** Whether an open run waits for recordings its cells have not uploaded (its status_detail, coordinator/runs/recording-wait.ts, says so). */
const waitsForRecordings = (run) => run.status_detail?.waiting_for === "recordings";

/** Episode count as requested: a number or auto(...) */
const requestedEpisodes = (run) => (typeof run.episodes === "number" ? run.episodes : null);

export async function runPage(ctx) {
  const id = ctx.params[0];
  ctx.setTitle(`Run ${id}`);
  const { signal } = ctx;
  let run = await api(`/v1/runs/${encodeURIComponent(id)}`, { signal });
  if (run.name) ctx.setTitle(`${run.name} (${id})`);
  const endedAtLoad = TERMINAL.has(run.status);
  const pilotTask = /^task_/.test(run.resolved_pins?.task ?? "") ? run.resolved_pins.task : null;

  const status = h("span", {}, badge(run.status));
  const actions = h("div", { class: "actions" });
  const actionErrors = errorSlot();
  const detail = h("div", {});

  // Progress: one entry per finished episode, from the stream's history and then live.
  const outcomes = new Map();
  let total = requestedEpisodes(run);
  const bar = h("progress", { max: total ?? 1, value: 0, "aria-labelledby": "h-progress" });
  const progressText = h("p", { class: "progress-text", "aria-live": "polite", "aria-atomic": "true" });
  const strip = h("ol", { class: "strip", "aria-hidden": "true" });
  const connection = h("p", { class: "small muted" });

  const live = can(ctx.caps, "streams:read") ? liveCamera({ signal, camera: "top" }) : null;
  const liveSection = live ? h("section", { class: "card", "aria-labelledby": "h-live", hidden: true }, h("h2", { id: "h-live" }, "Live"), live.element) : null;

  const resultSlot = h("div", {});
  const reportSlot = h("div", {});
  // Failures as stills and every episode as a row; either opens the episode (videos, joint plots) in one viewer.
  const viewer = episodeViewer(id, { signal, cleanup: ctx.cleanup });
  const clusters = Object.keys(run.result?.failure_clusters ?? {});
  const failures = failureGrid(id, { signal, cleanup: ctx.cleanup, open: (ep) => viewer.open(ep), clusters, stages: (run.result?.stage_funnel ?? []).map((s) => s.stage) });
  const episodes = episodesSection(id, { signal, cleanup: ctx.cleanup, open: (ep) => viewer.open(ep), clusters, units: run.units ?? [] });

  function renderHead() {
    replace(status, badge(run.status));
    const open = !TERMINAL.has(run.status);
    replace(actions,
      open && can(ctx.caps, "runs:write") ? confirmButton({
        label: "Cancel run", question: "Stop this run? Episodes that already ran keep their outcomes.", confirm: "Stop the run", slot: actionErrors,
        action: async () => { run = await api(`/v1/runs/${id}/cancel`, { method: "POST", signal }); renderHead(); },
      }) : null,
      run.kind === "run" && !pilotTask && can(ctx.caps, "runs:write") ? h("a", { class: "button", href: `#/runs/new?from=${id}` }, "Run again") : null,
      open && waitsForRecordings(run) && can(ctx.caps, "keys:admin") ? confirmButton({
        label: "Complete without the missing recordings",
        question: "Complete the run now? The recordings its cells have not uploaded are recorded missing; one uploaded later is still stored.",
        confirm: "Complete the run", slot: actionErrors,
        action: async () => { run = await api(`/v1/runs/${id}/complete-without-recordings`, { method: "POST", signal }); renderHead(); renderEnded(); },
      }) : null);
    // An open run's detail says what it waits for (an instrument, recordings its cells have not uploaded).
    const title = open ? "The run is waiting." : run.status === "failed" ? "The run failed." : "The run was stopped.";
    replace(detail, run.status_detail ? h("div", { class: run.status === "failed" ? "error" : "notice", role: "status" },
      h("p", { class: "error-title" }, title),
      h("p", {}, run.status_detail.message ?? ""),
      run.status_detail.code ? h("p", { class: "small" }, "Code ", h("code", {}, run.status_detail.code)) : null) : null);
  }

  function renderProgress() {
    const done = outcomes.size;
    const successes = [...outcomes.values()].filter((o) => o === "success").length;
    bar.max = Math.max(1, total ?? done);
    bar.value = done;
    progressText.textContent = `${done} of ${total ?? "?"} episodes finished: ${successes} succeeded, ${done - successes} failed.`;
    replace(strip, [...outcomes.entries()].sort((a, b) => a[0] - b[0]).map(([index, outcome]) => h("li", { class: `dot dot-${outcome}`, title: `Episode ${index}: ${outcome}` })));
  }

  function renderEnded() {
    replace(resultSlot, run.result ? [
      ...resultSections(run.result, { onCluster: (name) => { failures.showCluster(name); episodes.showCluster(name); } }),
      funnelSection(run.result, { onStage: (stage) => failures.showStage(stage) }),
    ] : null);
    replace(reportSlot, run.status === "completed" && !pilotTask ? [reportSection(run, { signal }), exportsSection(run, { signal, cleanup: ctx.cleanup })] : null);
  }

  ctx.show(
    h("div", { class: "page-head" }, h("h1", { tabindex: "-1" }, run.name ?? `Run ${id}`), status),
    labelsBlock(run),
    pilotTask ? h("p", { class: "notice" }, "This run is the pilot of task ", h("a", { href: `#/tasks/${pilotTask}` }, pilotTask), ": calibration only, so it has no report.") : null,
    actions, actionErrors.element, detail,
    h("section", { class: "card" }, facts([
      ["Kind", run.kind],
      ["Robot", run.resolved_pins?.robot ? `${run.resolved_pins.robot}${run.robot && run.robot !== run.resolved_pins.robot ? ` (asked: ${run.robot})` : ""}` : null],
      ["Environment", run.resolved_pins?.environment],
      ["Task", run.resolved_pins?.task],
      ["Perturbations", run.resolved_pins?.perturbation_rev],
      ["Policy", run.policy ? policyLine(run.policy) : run.policies ? Object.entries(run.policies).map(([name, p]) => `${name}: ${policyLine(p)}`).join("; ") : null],
      ["Episodes requested", run.episodes !== undefined ? String(run.episodes) : null],
      ["Priority", run.priority],
      ["Budget", run.max_budget_usd !== null ? `$${run.max_budget_usd}` : null],
      ["Created", when(run.created)],
      ["Completed", run.completed ? when(run.completed) : null],
    ])),
    h("section", { class: "card", "aria-labelledby": "h-progress" },
      h("h2", { id: "h-progress" }, "Progress"), bar, progressText, strip, connection),
    liveSection,
    resultSlot, reportSlot, failures.element, viewer.element, episodes.element);
  renderHead();
  renderProgress();
  renderEnded();
  void episodes.load();
  void failures.load();

  // Episodes are listed again as they finish, at most every 2 s.
  let relist = null;
  const relistSoon = () => { relist ??= setTimeout(() => { relist = null; void episodes.load(); void failures.load(); }, 2000); };
  ctx.cleanup(() => clearTimeout(relist));

  // What an open run waits for changes without a status event (recordings arriving, an instrument back): read it again.
  const rereadMs = 15_000;
  const reread = setInterval(() => {
    if (TERMINAL.has(run.status)) return clearInterval(reread);
    void api(`/v1/runs/${encodeURIComponent(id)}`, { signal }).then((fresh) => {
      if (fresh.status === run.status && fresh.status_detail?.message !== run.status_detail?.message) {
        run = fresh;
        renderHead();
      }
    }, () => undefined);
  }, rereadMs);
  ctx.cleanup(() => clearInterval(reread));

  void watchRun(id, {
    signal,
    onStatus(event) {
      connection.textContent = "";
      if (event.status !== run.status) {
        run = { ...run, status: event.status };
        renderHead();
      }
      if (event.cell && (event.status === "running" || event.status === "scheduling")) {
        if (liveSection) liveSection.hidden = false;
        void live?.show(event.cell);
      }
    },
    onEpisode(event) {
      // The stream's `episode` counts from 1 (the spec's "episode k of n"); the page numbers by index, from 0.
      outcomes.set(event.episode - 1, event.outcome);
      total = event.of;
      renderProgress();
      // A run that had ended when the page opened replays its history here: the lists loaded then are already whole.
      if (!endedAtLoad) relistSoon();
    },
    onReconnecting() { connection.textContent = "The live connection dropped; reconnecting…"; },
  }).then(async () => {
    if (signal.aborted) return;
    live?.stop();
    if (liveSection) liveSection.hidden = true;
    if (endedAtLoad) return;
    run = await api(`/v1/runs/${encodeURIComponent(id)}`, { signal });
    renderHead();
    renderEnded();
    await Promise.all([episodes.load(), failures.load()]);
  }).catch((error) => {
    if (!signal.aborted) actionErrors.show(error);
  });
}
