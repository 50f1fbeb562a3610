/**
 * Webhook endpoints (keys:admin): POST /v1/webhooks registers `{url, events, description?}` and
 * shows its signing secret once; GET lists; DELETE removes (undelivered events to it are
 * cancelled); GET /v1/webhooks/{id}/deliveries is the endpoint's delivery log.
 */
import { refusedDestination } from "../../webhooks/destination-policy.js";
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { AssayError } from "../../errors/assay-error.js";
import { deleteEndpoint, deliveryView, endpointView, getEndpoint, insertEndpoint, listDeliveries, listEndpoints } from "../../webhooks/endpoints-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { CreateWebhookRequest } from "../schemas/webhooks.js";
import { parseBody } from "../validate-request.js";

export function webhooksRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  router.post("/webhooks", async (req, res) => {
    const body = parseBody(CreateWebhookRequest, req.body);
    const refused = await refusedDestination(body.url, { allowLoopback: deps.webhooksAllowLoopback });
    if (refused) throw new AssayError("contract_validation_failed", `url ${JSON.stringify(body.url)} cannot receive webhooks: ${refused}; register a receiver on a public address`);
    const endpoint = { url: body.url, events: [...new Set(body.events)], description: body.description ?? null };
    const row = await insertEndpoint(deps.db, authOf(res).accountId, endpoint, deps.clock());
    res.status(201).json(endpointView(row, true));
  });

  router.get("/webhooks", async (_req, res) => {
    res.json({ object: "list", url: "/v1/webhooks", data: (await listEndpoints(deps.db, authOf(res).accountId)).map((row) => endpointView(row)) });
  });

  router.delete("/webhooks/:endpointId", async (req, res) => {
    const row = await deleteEndpoint(deps.db, authOf(res).accountId, req.params.endpointId, deps.clock());
    if (!row) throw new AssayError("not_found", `no webhook endpoint ${JSON.stringify(req.params.endpointId)} on this account`);
    res.json(endpointView(row));
  });

  router.get("/webhooks/:endpointId/deliveries", async (req, res) => {
    const endpoint = await getEndpoint(deps.db, authOf(res).accountId, req.params.endpointId);
    if (!endpoint) throw new AssayError("not_found", `no webhook endpoint ${JSON.stringify(req.params.endpointId)} on this account`);
    res.json({ object: "list", url: `/v1/webhooks/${endpoint.id}/deliveries`, data: (await listDeliveries(deps.db, endpoint.id)).map(deliveryView) });
  });

  return router;
}
