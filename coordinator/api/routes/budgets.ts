/**
 * PUT /v1/budgets (keys:admin): the account's monthly budget. Body `{monthly_usd, hard?,
 * remaining_usd?}`; `remaining_usd` is computed, never set (a number is accepted and ignored).
 * A hard budget that is already reached halts the account's open runs at once.
 */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { putBudget } from "../../billing/budgets.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { BudgetRequest } from "../schemas/money.js";
import { parseBody } from "../validate-request.js";

export function budgetsRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  router.put("/budgets", async (req, res) => {
    const { accountId } = authOf(res);
    const body = parseBody(BudgetRequest, req.body);
    const budget = await putBudget(deps.db, accountId, { monthlyUsd: body.monthly_usd, hard: body.hard === true }, deps.clock());
    await deps.budgetGuard.checkAccount(accountId);
    res.status(200).json({ monthly_usd: budget.monthlyUsd, hard: budget.hard });
  });

  return router;
}
