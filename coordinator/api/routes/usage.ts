/** GET /v1/usage?period=YYYY-MM (runs:read): the account's metered usage in a UTC month. */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { budgetView, getBudget } from "../../billing/budgets.js";
import { computeUsage } from "../../billing/usage.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { UsageQuery } from "../schemas/money.js";
import { parseQuery } from "../validate-request.js";

export function usageRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  router.get("/usage", async (req, res) => {
    const { accountId } = authOf(res);
    const { period } = parseQuery(UsageQuery, req);
    const usage = await computeUsage(deps.db, deps.pins, accountId, period);
    res.json({
      object: "usage",
      period,
      robot_hours: usage.robotHours,
      env_hours: usage.envHours,
      usd_total: usage.usdTotal,
      operator_reset_s: usage.operatorResetS,
      operator_label_s: usage.operatorLabelS,
      budget: budgetView(await getBudget(deps.db, accountId), usage.usdTotal),
    });
  });

  return router;
}
