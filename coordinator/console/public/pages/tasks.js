/**
 * Task specs through their lifecycle: the list (GET /v1/tasks), a new draft (POST /v1/tasks), and one
 * task (GET /v1/tasks/{id}) with amend, pilot (watched live: the pilot run's progress and the MJPEG
 * camera of the cell its status events name), freeze and revise.
 */
import { api } from "../api.js";
import { facts, field, h, replace } from "../dom.js";
import { pct, when } from "../format.js";
import { liveCamera } from "../live-camera.js";
import { TERMINAL, watchRun } from "../run-watch.js";
import { can } from "../session.js";
import { badge, busy, confirmButton, errorSlot, FormError, jsonBlock, table } from "../ui.js";

const SAMPLE_TASK = {
  name: "my-pick-cube",
  initial_conditions: { cube: { object: "cube", pose: [0.22, 0, 0.015, 0], randomize: { x_mm: 20, y_mm: 20, yaw_deg: 20 } } },
  success_predicates: [{ lifted: "pose(cube).z > 0.06 for 1.0s" }],
};
/** The fields POST /v1/tasks/{id}/amend accepts (the creation fields). */
const AMENDABLE = ["visibility", "environment_class", "initial_conditions", "success_predicates", "stages", "instructions", "envelope", "baseline"];

function jsonArea(id, value, rows = 12) {
  return h("textarea", { id, rows, spellcheck: "false", class: "code", value: JSON.stringify(value, null, 2) });
}

function parse(area) {
  try {
    return JSON.parse(area.value);
  } catch (error) {
    throw new FormError(`The JSON is not valid: ${error.message}`);
  }
}

export async function tasksPage(ctx) {
  ctx.setTitle("Tasks");
  const { signal } = ctx;
  const listSlot = h("div", {});
  const more = h("button", { type: "button", hidden: true }, "More tasks");
  const rows = [];
  async function load(after) {
    const page = await api(`/v1/tasks?limit=50${after ? `&starting_after=${encodeURIComponent(after)}` : ""}`, { signal });
    rows.push(...page.data);
    replace(listSlot, table("Tasks: the account's own in every status and published frozen revisions, newest first", ["Task", "Revision", "Status", "Visibility", "Created", "Pilot"], rows.map((t) => [
      h("a", { href: `#/tasks/${t.id}` }, t.name),
      t.rev ?? "—",
      badge(t.status),
      t.visibility,
      when(t.created),
      t.pilot?.run_id ? h("a", { href: `#/runs/${t.pilot.run_id}` }, t.pilot.run_id) : "—",
    ])));
    more.hidden = !page.has_more;
  }
  more.addEventListener("click", () => void load(rows.at(-1).id));
  await load();

  const errors = errorSlot();
  const area = jsonArea("task-body", SAMPLE_TASK, 14);
  const create = h("button", { type: "submit", class: "primary" }, "Create draft");
  const form = h("form", { class: "card", on: { submit: (e) => {
    e.preventDefault();
    void busy(create, async () => {
      const task = await api("/v1/tasks", { method: "POST", json: parse(area), signal });
      ctx.navigate(`/tasks/${task.id}`);
    }, errors);
  } } },
    field("Task spec (JSON)", area, "name, initial_conditions and success_predicates are required; see the predicate language in the docs. A draft costs nothing until it is piloted."),
    errors.element, h("div", { class: "actions" }, create));

  ctx.show(h("h1", { tabindex: "-1" }, "Tasks"), listSlot, more,
    can(ctx.caps, "runs:write") ? [h("h2", {}, "New task spec"), form] : null);
}

/** The pilot run, watched live: progress from its event stream and the camera of its cell. */
function pilotPanel(runId, episodes, ctx) {
  const text = h("p", { "aria-live": "polite" }, "Connecting to the pilot…");
  const live = can(ctx.caps, "streams:read") ? liveCamera({ signal: ctx.signal, camera: "top" }) : null;
  const outcomes = new Map();
  let of = episodes;
  let status = "queued";
  const bar = h("progress", { max: episodes, value: 0, "aria-labelledby": "h-pilot-live" });
  const render = () => {
    const ok = [...outcomes.values()].filter((o) => o === "success").length;
    bar.max = of;
    bar.value = outcomes.size;
    text.textContent = `Pilot ${status}: ${outcomes.size} of ${of} episodes finished, ${ok} succeeded.`;
  };
  void watchRun(runId, {
    signal: ctx.signal,
    onStatus(e) {
      status = e.status;
      render();
      if (e.cell && !TERMINAL.has(e.status)) void live?.show(e.cell);
      if (TERMINAL.has(e.status)) live?.stop();
    },
    onEpisode(e) { outcomes.set(e.episode, e.outcome); of = e.of; render(); },
  }).catch((error) => { text.textContent = `The pilot cannot be followed: ${error.message}`; });
  return h("section", { class: "card", "aria-labelledby": "h-pilot-live" },
    h("h2", { id: "h-pilot-live" }, "Pilot, live"), bar, text, live?.element ?? null,
    h("p", {}, h("a", { href: `#/runs/${runId}` }, `Open the pilot run ${runId}`)));
}

export async function taskPage(ctx) {
  const { signal } = ctx;
  const task = await api(`/v1/tasks/${encodeURIComponent(ctx.params[0])}`, { signal });
  ctx.setTitle(`Task ${task.rev ?? task.name}`);
  const errors = errorSlot();
  // Only the owning account is shown `baseline` (null when none was given).
  const mine = "baseline" in task;
  const writable = can(ctx.caps, "runs:write") && mine;
  const pilotRun = task.pilot?.run_id ? await api(`/v1/runs/${task.pilot.run_id}`, { signal }).catch(() => null) : null;

  const sections = [
    h("section", { class: "card" }, facts([
      ["Id", h("code", {}, task.id)],
      ["Revision", task.rev ?? "none yet (a draft)"],
      ["Visibility", task.visibility],
      ["Environment class", task.environment_class],
      ["Created", when(task.created)],
      ["Frozen", task.frozen ? when(task.frozen) : null],
      ["Signatures", task.signatures?.length ? h("ul", { class: "plain" }, task.signatures.map((s) => h("li", {}, h("code", {}, s.split(":").slice(0, 2).join(":")), "…"))) : null],
    ])),
    h("section", { class: "card", "aria-labelledby": "h-spec" },
      h("h2", { id: "h-spec" }, "Spec"),
      h("h3", {}, "Success predicates"),
      h("ul", { class: "plain" }, task.success_predicates.map((p) => Object.entries(p).map(([name, expr]) => h("li", {}, h("strong", {}, name), ": ", h("code", {}, expr))))),
      task.stages?.length ? [h("h3", {}, "Stages"), h("ul", { class: "plain" }, task.stages.map((p) => Object.entries(p).map(([name, expr]) => h("li", {}, h("strong", {}, name), ": ", h("code", {}, expr)))))] : null,
      h("h3", {}, "Initial conditions"), jsonBlock(task.initial_conditions),
      task.instructions ? [h("h3", {}, "Instructions"), jsonBlock(task.instructions)] : null,
      task.envelope ? [h("h3", {}, "Envelope"), jsonBlock(task.envelope)] : null),
    task.pilot ? h("section", { class: "card", "aria-labelledby": "h-pilot" },
      h("h2", { id: "h-pilot" }, "Pilot"),
      facts([
        ["Run", task.pilot.run_id ? h("a", { href: `#/runs/${task.pilot.run_id}` }, task.pilot.run_id) : null],
        ["Status", pilotRun ? badge(pilotRun.status) : null],
        ["Robot", task.pilot.robot],
        ["Episodes", String(task.pilot.episodes)],
        ["Result", pilotRun?.result ? `${pct(pilotRun.result.success_rate)} (n = ${pilotRun.result.n})` : null],
        ["Amendments while piloting", task.pilot.amendments.length ? task.pilot.amendments.map((a) => `${a.fields.join(", ")} (${new Date(a.at).toLocaleString()})`).join("; ") : "none"],
      ]),
      task.baseline_check ? h("p", { class: task.baseline_check.disagrees ? "notice" : "small" },
        `Your internal rate ${pct(task.baseline_check.internal_rate)} ${task.baseline_check.disagrees ? "lies outside" : "lies inside"} the pilot's 95% interval ${pct(task.baseline_check.pilot_ci95[0])} – ${pct(task.baseline_check.pilot_ci95[1])} (n = ${task.baseline_check.pilot_n}).`) : null) : null,
    pilotRun && !TERMINAL.has(pilotRun.status) ? pilotPanel(pilotRun.id, task.pilot.episodes, ctx) : null,
  ];

  const actions = [];
  if (writable && task.status !== "frozen") {
    const robot = h("input", { id: "pilot-robot", value: task.pilot?.robot?.replace(/@.*/, "@latest") ?? "so101@latest", autocomplete: "off" });
    const episodes = h("input", { id: "pilot-episodes", type: "number", min: 1, max: 50, value: 10 });
    const environment = h("input", { id: "pilot-environment", placeholder: "default for the class", autocomplete: "off" });
    const pilotButton = h("button", { type: "submit", class: "primary" }, task.status === "piloting" ? "Pilot again" : "Start the pilot");
    actions.push(h("form", { class: "card", on: { submit: (e) => {
      e.preventDefault();
      void busy(pilotButton, async () => {
        await api(`/v1/tasks/${task.id}/pilot`, { method: "POST", json: { robot: robot.value.trim(), episodes: Number(episodes.value), ...(environment.value.trim() ? { environment: environment.value.trim() } : {}) }, signal });
        ctx.reload();
      }, errors);
    } } },
      h("h2", {}, task.status === "piloting" ? "Pilot again" : "Run a pilot"),
      h("p", { class: "small muted" }, "A pilot is a short calibration run with the reference expert policy; its episodes never count in reports. Watch it below once it starts."),
      h("div", { class: "grid" }, field("Robot", robot), field("Episodes (1..50)", episodes), field("Environment (optional)", environment)),
      h("div", { class: "actions" }, pilotButton)));

    const area = jsonArea("amend-body", Object.fromEntries(AMENDABLE.filter((k) => task[k] !== undefined && task[k] !== null).map((k) => [k, task[k]])));
    const amendButton = h("button", { type: "submit" }, "Save amendment");
    actions.push(h("form", { class: "card", on: { submit: (e) => {
      e.preventDefault();
      void busy(amendButton, async () => { await api(`/v1/tasks/${task.id}/amend`, { method: "POST", json: parse(area), signal }); ctx.reload(); }, errors);
    } } },
      h("h2", {}, "Amend"), field("Fields to change (JSON)", area, "Merged over the spec and validated again as a whole; a failed amendment changes nothing."),
      h("div", { class: "actions" }, amendButton)));
  }
  if (writable && task.status === "piloting") {
    actions.push(h("section", { class: "card" }, h("h2", {}, "Freeze"),
      h("p", {}, "Freezing signs the spec and gives it its revision; it can never change after that."),
      confirmButton({ label: "Freeze", question: "Freeze this task for good?", confirm: "Freeze and sign", slot: errors,
        action: async () => { await api(`/v1/tasks/${task.id}/freeze`, { method: "POST", signal }); ctx.reload(); } })));
  }
  if (writable && task.status === "frozen") {
    const revise = h("button", { type: "button", on: { click: () => busy(revise, async () => {
      const draft = await api(`/v1/tasks/${task.id}/revise`, { method: "POST", signal });
      ctx.navigate(`/tasks/${draft.id}`);
    }, errors) } }, "Start the next revision");
    actions.push(h("section", { class: "card" }, h("h2", {}, "Revise"), h("p", {}, "A frozen spec never changes; the next revision starts as a new draft."), revise));
  }

  ctx.show(
    h("div", { class: "page-head" }, h("h1", { tabindex: "-1" }, `Task ${task.rev ?? task.name}`), badge(task.status)),
    errors.element, sections, actions);
}
