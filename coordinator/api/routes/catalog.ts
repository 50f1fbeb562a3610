/** GET /v1/robots and /v1/environments: the catalogue joined with installations and the live fleet. */
import { Router } from "express";
import { installedFirmwares, type RobotModel } from "../../../firmware-pins/pins.js";
import { environmentId, findEnvironment, type CatalogEnvironment } from "../../catalog/environments.js";
import { AssayError } from "../../errors/assay-error.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { EnvironmentListQuery, RobotListQuery } from "../schemas/catalog.js";
import { parseQuery } from "../validate-request.js";

export function catalogRouter(deps: CompiledApiDeps): Router {
  const router = Router();

  const robotView = async (model: RobotModel): Promise<Record<string, unknown>> => {
    const live = (await deps.fleet.connectedCells()).filter((c) => c.model === model.id);
    const dutyCyclePct = live.length ? live.reduce((sum, c) => sum + c.dutyCyclePct, 0) / live.length : 0;
    return {
      id: model.id,
      object: "robot",
      class: model.class,
      dof: model.dof,
      hands: model.hands,
      firmwares: installedFirmwares(deps.pins, model.id),
      cells: deps.pins.installations.filter((i) => i.model === model.id).length,
      duty_cycle_pct: Math.round(dutyCyclePct * 10) / 10,
      tier: model.tier,
    };
  };

  const environmentView = async (env: CatalogEnvironment): Promise<Record<string, unknown>> => {
    const id = environmentId(env);
    const online = (await deps.fleet.connectedCells()).some((c) => c.environment === id);
    return {
      id,
      object: "environment",
      name: env.name,
      version: env.version,
      class: env.class,
      description: env.description,
      instruments: env.instruments,
      objects: env.objects,
      lighting: env.lighting,
      distractor_sets: env.distractor_sets,
      released: env.released,
      status: online ? "online" : "offline",
      cells: deps.pins.installations.filter((i) => i.environment === id).length,
    };
  };

  router.get("/robots", (req, res) => {
    const { class: robotClass, tier } = parseQuery(RobotListQuery, req);
    const data = deps.pins.models
      .filter((m) => (robotClass === undefined || m.class === robotClass) && (tier === undefined || m.tier === tier))
      .map(robotView);
    res.json({ object: "list", url: "/v1/robots", data });
  });

  router.get("/environments", (req, res) => {
    const { class: envClass } = parseQuery(EnvironmentListQuery, req);
    const data = deps.environments.filter((e) => envClass === undefined || e.class === envClass).map(environmentView);
    res.json({ object: "list", url: "/v1/environments", data });
  });

  router.get("/environments/:environmentId", async (req, res) => {
    const env = findEnvironment(deps.environments, req.params.environmentId);
    if (!env) {
      throw new AssayError("not_found", `no environment ${JSON.stringify(req.params.environmentId)}; known: ${deps.environments.map(environmentId).join(", ")}`);
    }
    res.json(await environmentView(env));
  });

  return router;
}
