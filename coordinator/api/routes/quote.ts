/** POST /v1/quote (runs:read or runs:write): prices a run body without storing or scheduling a run. */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { createQuote } from "../../billing/quotes.js";
import { validateSubmission } from "../../lifecycle/submit-run.js";
import type { CompiledApiDeps } from "../api-deps.js";

export function quoteRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  router.post("/quote", async (req, res) => {
    const { accountId } = authOf(res);
    const validated = await validateSubmission(deps, accountId, req.body);
    res.status(200).json(await createQuote(deps.db, deps.pins, accountId, validated, deps.clock(), deps.quoteValidityMs));
  });

  return router;
}
