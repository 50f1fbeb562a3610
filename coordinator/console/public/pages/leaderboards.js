/**
 * Published leaderboards (GET /v1/leaderboards, GET /v1/leaderboards/{id}): public data, shown with or
 * without a key. A board shows what it pins, its entries in rank order with n beside each rate and
 * the interval drawn as a bar, the tiers and the rule behind them, and the Bradley-Terry strengths
 * when paired compares were published on it.
 */
import { api, apiBlob } from "../api.js";
import { facts, h } from "../dom.js";
import { pct, when } from "../format.js";
import { rateBar, saveBlob, table } from "../ui.js";

function pinFacts(pins) {
  return facts([
    [pins.kind === "suite" ? "Suite" : "Task", pins.subject],
    ["Robot", pins.robot],
    ["Environment", pins.environment ?? "as the suite fixes it"],
    ["Perturbation", pins.perturbation ? `${pins.perturbation_rev}, ${JSON.stringify(pins.perturbation)}` : pins.perturbation_rev],
    ["Instructions", pins.instructions],
  ]);
}

export async function leaderboardsPage(ctx) {
  ctx.setTitle("Leaderboards");
  const list = await api("/v1/leaderboards", { signal: ctx.signal });
  ctx.show(
    h("h1", { tabindex: "-1" }, "Leaderboards"),
    h("p", {}, "Published results, public to everyone. Each board holds results with the same pins; entries are ordered by the lower end of their 95% interval."),
    table("Boards, most recently updated first", ["Board", "Entries", "Leader", "Updated"], list.data.map((b) => [
      h("a", { href: `#/leaderboards/${b.id}` }, b.title),
      String(b.entries),
      [`${b.leader.policy_name} (${b.leader.account}) `, h("span", { class: "muted" }, `${pct(b.leader.success_rate)}, n = ${b.leader.n}`)],
      when(b.updated),
    ]), { empty: "No results have been published yet." }));
}

export async function leaderboardPage(ctx) {
  const [id] = ctx.params;
  const board = await api(`/v1/leaderboards/${encodeURIComponent(id)}`, { signal: ctx.signal });
  ctx.setTitle(`Leaderboard ${board.title}`);
  const pdf = (entry) => h("button", {
    type: "button",
    on: { click: async () => saveBlob(await apiBlob(`${new URL(entry.report_url).pathname}?format=pdf`, { signal: ctx.signal }), `assay-report-${entry.run_id}.pdf`) },
  }, "Report (PDF)");
  const bt = board.bradley_terry;
  ctx.show(
    h("h1", { tabindex: "-1" }, board.title),
    h("section", { class: "card", "aria-labelledby": "h-pins" }, h("h2", { id: "h-pins" }, "What every entry shares"), pinFacts(board.pins)),
    h("section", { class: "card", "aria-labelledby": "h-entries" },
      h("h2", { id: "h-entries" }, `Entries (${board.entries.length}) in ${board.ranking.tiers} ${board.ranking.tiers === 1 ? "tier" : "tiers"}`),
      table(null, ["Rank", "Tier", "Policy", "Account", "Success", "Completed", "Report"], board.entries.map((e) => [
        String(e.rank), String(e.tier), e.policy_name, e.account,
        [rateBar(e, null), ...(e.tasks ?? []).map((t) => rateBar(t, t.task))],
        when(e.completed), pdf(e),
      ])),
      h("p", { class: "small" }, board.ranking.rule.description),
      h("p", { class: "small" }, `Error rate controlled: ${board.ranking.rule.error_rate}.`)),
    bt ? h("section", { class: "card", "aria-labelledby": "h-bt" },
      h("h2", { id: "h-bt" }, "Head to head (Bradley-Terry)"),
      h("p", { class: "small" }, bt.note),
      table(null, ["Policy", "Strength (log)", "95% interval", "Elo", "Won", "Lost", "Ties"], bt.policies.map((p) => [
        p.id, p.log_strength.toFixed(2), p.ci95 ? `${p.ci95[0].toFixed(2)} to ${p.ci95[1].toFixed(2)}` : "—", String(Math.round(p.elo)), String(p.wins), String(p.losses), String(p.ties),
      ]))) : null);
}
