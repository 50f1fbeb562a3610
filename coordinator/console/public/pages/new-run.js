/**
 * A new run (kind `run`) from a few fields or from its JSON body, priced first if wanted.
 * The fields write the body; the body is what is sent, so anything the API accepts (other policy
 * types, other kinds) can be typed into it. POST /v1/quote prices it; POST /v1/runs submits it with
 * an Idempotency-Key that stays the same while the body does, so a double submission makes one run.
 * `#/runs/new?from=run_...` starts from an earlier run's body.
 */
import { api } from "../api.js";
import { field, h, options, replace } from "../dom.js";
import { hours, money, when } from "../format.js";
import { busy, errorSlot, FormError } from "../ui.js";

const PRIORITIES = ["standard", "burst", "soak"];
const IMAGES = ["assay/ref-policy:expert", "assay/ref-policy:novice"];
/** The fields of a kind `run` body that "Run again" copies from an earlier run. */
const RUN_FIELDS = ["kind", "robot", "environment", "task", "episodes", "policy", "priority", "perturbation", "data", "max_budget_usd", "interventions", "publish", "instructions"];

/** 32 random hex characters (crypto.randomUUID needs a secure context; a LAN http:// page is not one). */
function randomKey() {
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export async function newRunPage(ctx) {
  ctx.setTitle("New run");
  const [robots, environments, tasks, from] = await Promise.all([
    api("/v1/robots", { signal: ctx.signal }),
    api("/v1/environments", { signal: ctx.signal }),
    api("/v1/tasks?limit=100", { signal: ctx.signal }).catch(() => ({ data: [] })),
    ctx.query.get("from") ? api(`/v1/runs/${encodeURIComponent(ctx.query.get("from"))}`, { signal: ctx.signal }) : null,
  ]);
  const installed = robots.data.filter((r) => r.firmwares.length > 0);

  const robot = h("select", { id: "run-robot" }, options(installed.flatMap((r) => [`${r.id}@latest`, ...r.firmwares.map((f) => `${r.id}@${f}`)]), "so101@latest"));
  const environment = h("select", { id: "run-environment" }, options(environments.data.map((e) => [e.id, `${e.id} (${e.class}, ${e.status})`]), "tabletop@1"));
  const task = h("input", { id: "run-task", list: "task-revs", value: "pick-cube@v1", autocomplete: "off" });
  const taskRevs = h("datalist", { id: "task-revs" }, options(tasks.data.filter((t) => t.rev).map((t) => t.rev)));
  const episodes = h("input", { id: "run-episodes", value: "20", inputmode: "numeric", autocomplete: "off" });
  const image = h("input", { id: "run-image", list: "policy-images", value: IMAGES[0], autocomplete: "off" });
  const images = h("datalist", { id: "policy-images" }, options(IMAGES));
  const priority = h("select", { id: "run-priority" }, options(PRIORITIES, "standard"));
  const seed = h("input", { id: "run-seed", inputmode: "numeric", autocomplete: "off" });
  const budget = h("input", { id: "run-budget", inputmode: "decimal", autocomplete: "off" });
  const name = h("input", { id: "run-name", maxlength: 100, autocomplete: "off" });
  const policyName = h("input", { id: "run-policy-name", maxlength: 80, autocomplete: "off" });
  const body = h("textarea", { id: "run-body", rows: 16, spellcheck: "false", class: "code" });

  const quoteButton = h("button", { type: "button", on: { click: quote } }, "Get a quote");
  const submitButton = h("button", { type: "submit", class: "primary" }, "Submit run");
  const errors = errorSlot();
  const quoteOut = h("section", { class: "quote card", "aria-live": "polite", hidden: true });


  function bodyFromFields() {
    const model = installed.find((r) => robot.value.startsWith(`${r.id}@`));
    const env = environments.data.find((e) => e.id === environment.value);
    const cameras = (env?.instruments ?? []).filter((i) => i.kind === "camera").map((i) => i.name);
    const count = episodes.value.trim();
    return {
      kind: "run",
      robot: robot.value,
      environment: environment.value,
      task: task.value.trim(),
      episodes: /^\d+$/.test(count) ? Number(count) : count,
      policy: {
        type: "container",
        image: image.value.trim(),
        action_space: { type: "joint_position", dim: model?.dof ?? 6 },
        observation_contract: { cameras, state: ["joint_positions"] },
      },
      ...(priority.value !== "standard" ? { priority: priority.value } : {}),
      ...(seed.value.trim() ? { perturbation: { seed: Number(seed.value) } } : {}),
      ...(budget.value.trim() ? { max_budget_usd: Number(budget.value) } : {}),
      ...(name.value.trim() ? { name: name.value.trim() } : {}),
      ...(policyName.value.trim() ? { policy_name: policyName.value.trim() } : {}),
    };
  }

  const writeBody = () => { body.value = JSON.stringify(bodyFromFields(), null, 2); };
  for (const input of [robot, environment, task, episodes, image, priority, seed, budget, name, policyName]) input.addEventListener("input", writeBody);

  if (from) {
    body.value = JSON.stringify(Object.fromEntries(RUN_FIELDS.filter((f) => from[f] !== undefined && from[f] !== null).map((f) => [f, from[f]])), null, 2);
  } else {
    writeBody();
  }

  let idempotency = { body: "", key: "" };
  function parsedBody() {
    try {
      return JSON.parse(body.value);
    } catch (error) {
      throw new FormError(`The request body is not valid JSON: ${error.message}`);
    }
  }

  async function quote() {
    await busy(quoteButton, async () => {
      const sent = parsedBody();
      const q = await api("/v1/quote", { method: "POST", json: sent, signal: ctx.signal });
      const submitQuoted = h("button", { type: "button", class: "primary", on: { click: () => busy(submitQuoted, () => submit(null, { ...sent, quote_id: q.id }), errors) } }, "Submit this quoted run");
      quoteOut.hidden = false;
      replace(quoteOut,
        h("h2", {}, "Quote"),
        h("dl", { class: "facts" },
          h("dt", {}, "Episodes"), h("dd", {}, `${q.n} (${q.n_basis})`),
          h("dt", {}, "Cost, at most"), h("dd", { class: "big" }, money(q.cost_usd)),
          h("dt", {}, "Robot-hours"), h("dd", {}, hours(q.robot_hours)),
          h("dt", {}, "Environment-hours"), h("dd", {}, hours(q.environment_hours)),
          h("dt", {}, "Rates"), h("dd", {}, `${q.price.tier ?? "mixed"} tier ${money(q.price.robot_hour_usd)}/h, ${q.price.environment_class ?? "mixed"} environment ${money(q.price.environment_hour_usd)}/h, ${q.price.priority} × ${q.price.priority_multiplier}`),
          h("dt", {}, "Pins"), h("dd", {}, `${q.pins.robot} in ${q.pins.environment}, ${q.pins.task}`),
          h("dt", {}, "Valid until"), h("dd", {}, when(q.expires))),
        h("p", { class: "muted small" }, `Quote ${q.id}. Each episode is priced at its longest duration plus reset; the bill counts what ran.`),
        submitQuoted);
    }, errors);
  }

  async function submit(event, quoted) {
    event?.preventDefault();
    const sent = quoted ?? parsedBody();
    const text = JSON.stringify(sent);
    if (idempotency.body !== text) idempotency = { body: text, key: randomKey() };
    const run = await api("/v1/runs", { method: "POST", json: sent, idempotencyKey: idempotency.key, signal: ctx.signal });
    ctx.navigate(`/runs/${run.id}`);
  }

  const form = h("form", { class: "card", on: { submit: (e) => { e.preventDefault(); void busy(submitButton, () => submit(e), errors); } } },
    h("div", { class: "grid" },
      field("Robot", robot, "model@firmware, or @latest for the newest installed"),
      field("Environment", environment),
      field("Task", task, "a frozen revision, e.g. pick-cube@v1"),
      field("Episodes", episodes, "1..10000, or auto(ci=0.95, moe=0.05)"),
      field("Policy image", image, "a container image the cells can run"),
      field("Priority", priority),
      field("Seed (optional)", seed, "fixes the initial conditions: the same seed gives the same layouts"),
      field("Budget in USD (optional)", budget, "a hard stop, metered live"),
      field("Name (optional)", name, "a short title the runs list shows"),
      field("Policy name (optional)", policyName, "what lists call the policy; default its image")),
    taskRevs, images,
    field("Request body (JSON)", body, "The fields above write this body; edit it for anything else the API accepts (docs: POST /v1/runs). Changing a field rewrites it."),
    errors.element,
    h("div", { class: "actions" }, quoteButton, submitButton));

  ctx.show(h("h1", { tabindex: "-1" }, from ? `New run from ${from.id}` : "New run"), form, quoteOut);
}
