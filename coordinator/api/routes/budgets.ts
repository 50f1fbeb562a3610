/**
 * PUT /v1/budgets (keys:admin): the account's monthly budget. Body `{monthly_usd, hard?,
 * remaining_usd?}`; `remaining_usd` is computed, never set (a number is accepted and ignored).
 * A hard budget that is already reached halts the account's open runs at once.
 */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { putBudget } from "../../billing/budgets.js";
import { AssayError } from "../../errors/assay-error.js";
import type { CompiledApiDeps } from "../api-deps.js";

const FIELDS = ["monthly_usd", "hard", "remaining_usd"];

function parseBudget(body: unknown): { monthlyUsd: number; hard: boolean } {
  const invalid = (message: string) => new AssayError("contract_validation_failed", message);
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalid(`request body must be a JSON object {"monthly_usd": <number>, "hard": <boolean>}`);
  const record = body as Record<string, unknown>;
  for (const key of Object.keys(record)) if (!FIELDS.includes(key)) throw invalid(`unknown field ${key}; allowed: ${FIELDS.join(", ")}`);
  const monthly = record.monthly_usd;
  if (typeof monthly !== "number" || !Number.isFinite(monthly) || monthly < 0) throw invalid(`monthly_usd is required: a number of US dollars >= 0; got ${JSON.stringify(monthly) ?? "undefined"}`);
  if (record.hard !== undefined && typeof record.hard !== "boolean") throw invalid(`hard must be true or false; got ${JSON.stringify(record.hard)}`);
  if (record.remaining_usd !== undefined && (typeof record.remaining_usd !== "number" || !Number.isFinite(record.remaining_usd))) {
    throw invalid(`remaining_usd, when sent, must be a number (it is computed from usage and ignored here); got ${JSON.stringify(record.remaining_usd)}`);
  }
  return { monthlyUsd: monthly, hard: record.hard === true };
}

export function budgetsRouter(deps: CompiledApiDeps): Router {
  const router = Router();

  router.put("/budgets", (req, res) => {
    const { accountId } = authOf(res);
    const budget = putBudget(deps.db, accountId, parseBudget(req.body), deps.clock());
    deps.budgetGuard.checkAccount(accountId);
    res.status(200).json({ monthly_usd: budget.monthlyUsd, hard: budget.hard });
  });

  return router;
}
