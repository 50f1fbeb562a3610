/** GET /v1/usage?period=YYYY-MM (runs:read): the account's metered usage in a UTC month. */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { budgetView, getBudget } from "../../billing/budgets.js";
import { computeUsage, isPeriod } from "../../billing/usage.js";
import { AssayError } from "../../errors/assay-error.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { queryString } from "../query.js";

export function usageRouter(deps: CompiledApiDeps): Router {
  const router = Router();

  router.get("/usage", (req, res) => {
    const { accountId } = authOf(res);
    const period = queryString(req, "period");
    if (period === undefined || !isPeriod(period)) {
      throw new AssayError("contract_validation_failed", `query parameter period is required as YYYY-MM (a UTC month, e.g. 2026-11); got ${JSON.stringify(period) ?? "nothing"}`);
    }
    const usage = computeUsage(deps.db, deps.pins, accountId, period);
    res.json({
      object: "usage",
      period,
      robot_hours: usage.robotHours,
      env_hours: usage.envHours,
      usd_total: usage.usdTotal,
      budget: budgetView(getBudget(deps.db, accountId), usage.usdTotal),
    });
  });

  return router;
}
