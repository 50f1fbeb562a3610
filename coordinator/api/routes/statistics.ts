/**
 * GET /v1/statistics/priors: the headline priors a run submitted now would record, per robot model
 * and environment class (fitted from the fleet, or the default). Any key may read it: it carries
 * fitted priors only, no account's runs or counts (docs/api.md, "Statistics").
 */
import { Router } from "express";
import { ENVIRONMENT_CLASSES } from "../../catalog/environments.js";
import { currentHeadlinePriors, priorKey } from "../../runs/headline-priors.js";
import { DEFAULT_HEADLINE_PRIOR } from "../../stats/beta-binomial-rate.js";
import type { CompiledApiDeps } from "../api-deps.js";

export function statisticsRouter(deps: CompiledApiDeps, router: Router = Router()): Router {
  router.get("/statistics/priors", async (_req, res) => {
    const fitted = new Map((await currentHeadlinePriors(deps.db)).map((p) => [priorKey(p.robot_model, p.environment_class), p]));
    const models = new Set([...deps.pins.models.map((m) => m.id), ...[...fitted.values()].map((p) => p.robot_model)]);
    const data = [...models].sort().flatMap((model) => ENVIRONMENT_CLASSES.map((environmentClass) => ({
      object: "headline_prior" as const,
      robot_model: model,
      environment_class: environmentClass,
      prior: fitted.get(priorKey(model, environmentClass))?.prior ?? DEFAULT_HEADLINE_PRIOR,
    })));
    res.json({ object: "list", url: "/v1/statistics/priors", data });
  });
  return router;
}
