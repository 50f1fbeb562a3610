/** GET /v1/robots and /v1/environments: the catalogue joined with installations and the live fleet. */
import { Router } from "express";
import { installedFirmwares, type RobotModel } from "../../../firmware-pins/pins.js";
import { environmentId, findEnvironment, type CatalogEnvironment } from "../../catalog/environments.js";
import { AssayError } from "../../errors/assay-error.js";
import type { CompiledApiDeps } from "../api-deps.js";
import type { ConnectedCell } from "../../cells/fleet-view.js";
import { EnvironmentListQuery, RobotListQuery } from "../schemas/catalog.js";
import { parseQuery } from "../validate-request.js";

export function catalogRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  // The live fleet is read once per request and passed to each view.
  const robotView = (model: RobotModel, connected: readonly ConnectedCell[]): Record<string, unknown> => {
    const live = connected.filter((c) => c.model === model.id);
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

  const environmentView = (env: CatalogEnvironment, connected: readonly ConnectedCell[]): Record<string, unknown> => {
    const id = environmentId(env);
    const online = connected.some((c) => c.environment === id);
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

  router.get("/robots", async (req, res) => {
    const { class: robotClass, tier } = parseQuery(RobotListQuery, req);
    const connected = await deps.fleet.connectedCells();
    const data = deps.pins.models
      .filter((m) => (robotClass === undefined || m.class === robotClass) && (tier === undefined || m.tier === tier))
      .map((m) => robotView(m, connected));
    res.json({ object: "list", url: "/v1/robots", data });
  });

  router.get("/environments", async (req, res) => {
    const { class: envClass } = parseQuery(EnvironmentListQuery, req);
    const connected = await deps.fleet.connectedCells();
    const data = deps.environments.filter((e) => envClass === undefined || e.class === envClass).map((e) => environmentView(e, connected));
    res.json({ object: "list", url: "/v1/environments", data });
  });

  router.get("/environments/:environmentId", async (req, res) => {
    const env = findEnvironment(deps.environments, req.params.environmentId);
    if (!env) {
      throw new AssayError("not_found", `no environment ${JSON.stringify(req.params.environmentId)}; known: ${deps.environments.map(environmentId).join(", ")}`);
    }
    res.json(environmentView(env, await deps.fleet.connectedCells()));
  });

  return router;
}
