/**
 * A Result as sections: a compare's or transfer's comparison first (result.headline: the difference, its
 * interval and test, the claim in one sentence, each side's rate), then the headline rate with `n` and its
 * interval bar, per-stage rates, the episodes per cell, failure clusters, cost and both meters, each unit
 * of a multi-unit kind, and the kind's raw sections collapsed.
 */
import { headlineCard } from "../difference.js";
import { h } from "../dom.js";
import { hours, money, num, pct } from "../format.js";
import { jsonBlock, rateBar, table } from "../ui.js";

/** `onCluster(name)` is called when a failure cluster is chosen (the episodes table filters on it). */
export function resultSections(result, { onCluster } = {}) {
  const clusters = Object.entries(result.failure_clusters ?? {}).sort((a, b) => b[1] - a[1]);
  const stages = Object.entries(result.stages ?? {});
  const cells = result.cells;
  return [
    // The answer a compare or transfer exists for, before anything else.
    result.headline ? headlineCard(result.headline) : null,
    h("section", { class: "card", "aria-labelledby": "h-result" },
      h("h2", { id: "h-result" }, "Result"),
      result.population ? h("p", { class: "muted" }, result.population.description) : null,
      h("div", { class: "headline" }, rateBar(result)),
      // The headline in words, the same sentences the CLI and the PDF report print (coordinator/runs/headline-statement.ts).
      cells?.statement?.length ? h("div", { class: "statement" }, cells.statement.map((line) => h("p", { class: "small" }, line))) : null,
      result.ci_requested ? h("p", { class: "small" }, `At the requested confidence ${pct(result.ci_requested.ci)}: ${pct(result.ci_requested.interval[0])} – ${pct(result.ci_requested.interval[1])} (${result.ci_requested.interval_method}).`) : null,
      result.labels ? judgedBy(result.labels) : null,
      result.operator_time || result.invalidated?.length ? operatorWork(result) : null,
      result.assisted ? h("div", {}, h("h3", {}, "Counting successes a person helped"), rateBar(result.assisted, "assisted")) : null,
      h("h3", {}, "Cost and meters"),
      h("dl", { class: "facts" },
        h("dt", {}, "Cost"), h("dd", { class: "big" }, money(result.cost_usd)),
        h("dt", {}, "Robot-hours"), h("dd", {}, hours(result.robot_hours)),
        h("dt", {}, "Environment-hours"), h("dd", {}, hours(result.environment_hours)))),
    stages.length > 0 ? h("section", { class: "card", "aria-labelledby": "h-stages" },
      h("h2", { id: "h-stages" }, "Stages"),
      h("div", { class: "rates" }, stages.map(([name, summary]) => rateBar(summary, name)))) : null,
    cells ? h("section", { class: "card", "aria-labelledby": "h-cells" },
      h("h2", { id: "h-cells" }, "Episodes per cell"),
      table(null, ["Cell", "Episodes", "Successes", "Rate"], cells.by_cell.map((c) => [c.cell, String(c.n), String(c.successes), pct(c.success_rate)])),
      cells.statement ? null : h("p", { class: "small muted" }, `${cells.clusters} cell(s); design effect ${num(cells.design_effect)}, effective n ${num(cells.effective_n)}.`)) : null,
    h("section", { class: "card", "aria-labelledby": "h-failures" },
      h("h2", { id: "h-failures" }, "Failure clusters"),
      clusters.length === 0 ? h("p", { class: "muted" }, "No failures.") : h("ul", { class: "clusters" }, clusters.map(([name, count]) => h("li", {},
        onCluster ? h("button", { type: "button", class: "link", on: { click: () => onCluster(name) } }, name) : name,
        ` — ${count} episode${count === 1 ? "" : "s"}`)))),
    result.units?.length ? h("section", { class: "card", "aria-labelledby": "h-units" },
      h("h2", { id: "h-units" }, "Units"),
      h("div", { class: "rates" }, result.units.map((u) => rateBar(u.result, `${u.key}: ${u.robot} in ${u.environment}`)))) : null,
    kindSections(result),
  ];
}

/** Kind-specific sections (a compare's test, a threshold's verdict, ...) shown as they come. */
function kindSections(result) {
  const KIND_KEYS = ["comparison", "gap", "scores", "threshold", "agreement", "audit", "cells_compared", "regressions", "interventions"];
  const present = KIND_KEYS.filter((k) => result[k] !== undefined && result[k] !== null && !(k === "interventions" && result[k].mode === "none"));
  if (present.length === 0) return null;
  return h("section", { class: "card", "aria-labelledby": "h-kind" },
    h("h2", { id: "h-kind" }, "Details of this kind"),
    h("p", { class: "small muted" }, "The kind's sections as the API returns them (raw JSON)."),
    present.map((k) => h("details", {}, h("summary", {}, k), jsonBlock(result[k]))));
}

const INVALID_WORDS = { scene_wrong: "the scene was set wrong", hardware_fault: "a hardware fault", person_in_cell: "a person was in the cell" };

/** What people did for the run: their time at resets and labels, and the episodes they marked invalid (re-run, not counted). */
function operatorWork(result) {
  const time = result.operator_time;
  const invalidated = result.invalidated ?? [];
  return h("div", { class: "operator-work" },
    time ? h("p", { class: "small" }, `Operator time: ${time.resets} reset${time.resets === 1 ? "" : "s"} waited for a person, ${num(time.reset_s_total)} s in all, ${num(time.reset_s_per_episode)} s per counted episode`,
      result.labels?.label_s_total !== undefined ? `; labelling ${num(result.labels.label_s_total)} s` : "", ".") : null,
    invalidated.length ? h("p", { class: "small" }, `Marked invalid at the station and run again (not counted): `,
      invalidated.map((v) => `#${v.index} attempt ${v.attempt} (${INVALID_WORDS[v.reason] ?? v.reason})`).join(", "), ".") : null);
}

const JUDGED_BY_WORDS = { instrument: "the cell's instruments", human: "people at the operator station", judge: "the run's judge endpoint", mixed: "people, a judge endpoint and instruments together" };

/** Who decided the outcomes (labels.judged_by), the people's progress score, and a judge's agreement with people. */
function judgedBy(labels) {
  const judge = labels.judge;
  const agreement = judge?.agreement;
  return h("div", { class: "judged-by", "data-judged-by": labels.judged_by },
    h("p", { class: "small" }, `Judged by ${JUDGED_BY_WORDS[labels.judged_by] ?? labels.judged_by}: ${labels.labelled} labelled by people`,
      labels.judged !== undefined ? `, ${labels.judged} decided by the judge alone` : "",
      labels.unlabelled?.length ? `, ${labels.unlabelled.length} unlabelled (not counted)` : "",
      labels.progress ? `; mean progress ${num(labels.progress.mean)}${labels.progress.ci95 ? ` (95% CI ${num(labels.progress.ci95[0])} – ${num(labels.progress.ci95[1])})` : ""}` : "", "."),
    judge ? h("p", { class: "small" },
      agreement.cohen_kappa !== null
        ? `Judge against people on ${agreement.n} audited episode${agreement.n === 1 ? "" : "s"}: kappa ${num(agreement.cohen_kappa)} (95% CI ${num(agreement.kappa_ci95[0])} – ${num(agreement.kappa_ci95[1])}), agreement ${pct(agreement.agreement_rate)}`
        : `Judge against people: no kappa yet (${agreement.n} audited episode${agreement.n === 1 ? "" : "s"} with both)`,
      `; ${judge.low_confidence} unsure and ${judge.failed} unanswered went to people.`) : null);
}

