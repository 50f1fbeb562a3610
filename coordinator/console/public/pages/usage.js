/**
 * Usage of a UTC month against the monthly budget (GET /v1/usage?period=YYYY-MM) and, for keys:admin,
 * the budget itself (PUT /v1/budgets).
 */
import { api } from "../api.js";
import { field, h, replace } from "../dom.js";
import { hours, money, pct, utcMonth } from "../format.js";
import { can } from "../session.js";
import { busy, errorSlot } from "../ui.js";

export async function usagePage(ctx) {
  ctx.setTitle("Usage");
  const { signal } = ctx;
  const errors = errorSlot();
  const period = h("input", { id: "usage-period", type: "month", value: ctx.query.get("period") ?? utcMonth(), required: true });
  const out = h("div", { "aria-live": "polite" });
  let current = null;

  async function load() {
    try {
      current = await api(`/v1/usage?period=${encodeURIComponent(period.value)}`, { signal });
      errors.clear();
      render(current);
    } catch (error) {
      if (!signal.aborted) errors.show(error);
    }
  }

  function render(u) {
    const { monthly_usd: budget, hard, remaining_usd: remaining } = u.budget;
    const share = budget ? Math.min(1, u.usd_total / budget) : null;
    replace(out,
      h("section", { class: "card", "aria-labelledby": "h-spent" },
        h("h2", { id: "h-spent" }, `Spent in ${u.period} (UTC)`),
        h("p", { class: "big" }, money(u.usd_total)),
        budget !== null ? [
          h("meter", { min: 0, max: budget || 1, value: Math.min(u.usd_total, budget), low: budget * 0.8, high: budget * 0.95, optimum: 0, "aria-labelledby": "h-spent", class: "budget" }),
          h("p", {}, `${pct(share)} of the ${hard ? "hard" : "informational"} monthly budget of ${money(budget)}; ${money(remaining)} left.`,
            hard ? " At the budget, new runs are refused and open runs stop." : " Nothing is refused at this budget."),
        ] : h("p", { class: "muted" }, "No monthly budget is set.")),
      h("section", { class: "card", "aria-labelledby": "h-meters" },
        h("h2", { id: "h-meters" }, "Meters"),
        h("table", {},
          h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Meter"), h("th", { scope: "col" }, "Kind"), h("th", { scope: "col" }, "Hours"))),
          h("tbody", {},
            Object.entries(u.robot_hours).map(([tier, v]) => h("tr", {}, h("td", {}, "Robot-hours"), h("td", {}, `${tier} tier`), h("td", {}, hours(v)))),
            Object.entries(u.env_hours).map(([cls, v]) => h("tr", {}, h("td", {}, "Environment-hours"), h("td", {}, cls), h("td", {}, hours(v))))))));
  }

  period.addEventListener("change", () => {
    history.replaceState(null, "", `#/usage?period=${period.value}`);
    void load();
  });

  let budgetForm = null;
  if (can(ctx.caps, "keys:admin")) {
    const amount = h("input", { id: "budget-usd", type: "number", min: 0, step: "0.01", required: true });
    const hard = h("input", { id: "budget-hard", type: "checkbox" });
    const save = h("button", { type: "submit" }, "Save budget");
    const saved = h("p", { role: "status", class: "small" });
    const budgetErrors = errorSlot();
    budgetForm = h("form", { class: "card", on: { submit: (e) => {
      e.preventDefault();
      void busy(save, async () => {
        const b = await api("/v1/budgets", { method: "PUT", json: { monthly_usd: Number(amount.value), hard: hard.checked }, signal });
        saved.textContent = `Saved: ${money(b.monthly_usd)} a month, ${b.hard ? "hard" : "informational"}.`;
        await load();
      }, budgetErrors);
    } } },
      h("h2", {}, "Monthly budget"),
      field("Budget in USD per UTC month", amount),
      h("label", { class: "check" }, hard, " Hard: refuse new runs and stop open ones once the month's usage reaches it"),
      budgetErrors.element, h("div", { class: "actions" }, save), saved);
  }

  await load();
  if (current && current.budget.monthly_usd !== null && budgetForm) {
    budgetForm.querySelector("#budget-usd").value = String(current.budget.monthly_usd);
    budgetForm.querySelector("#budget-hard").checked = current.budget.hard;
  }
  ctx.show(h("h1", { tabindex: "-1" }, "Usage"), h("form", { class: "filters", on: { submit: (e) => e.preventDefault() } }, field("Month (UTC)", period)), errors.element, out, budgetForm);
}
