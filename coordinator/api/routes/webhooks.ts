/**
 * Webhook endpoints (keys:admin): POST /v1/webhooks registers `{url, events, description?}` and
 * shows its signing secret once; GET lists; DELETE removes (undelivered events to it are
 * cancelled); GET /v1/webhooks/{id}/deliveries is the endpoint's delivery log.
 */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { AssayError } from "../../errors/assay-error.js";
import { isWebhookEventType, WEBHOOK_EVENT_TYPES, type WebhookEventType } from "../../webhooks/event-types.js";
import { deleteEndpoint, deliveryView, endpointView, getEndpoint, insertEndpoint, listDeliveries, listEndpoints } from "../../webhooks/endpoints-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";

const FIELDS = ["url", "events", "description"];

function parseEndpoint(body: unknown): { url: string; events: WebhookEventType[]; description: string | null } {
  const invalid = (message: string) => new AssayError("contract_validation_failed", message);
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalid(`request body must be a JSON object {"url", "events", "description"?}`);
  const record = body as Record<string, unknown>;
  for (const key of Object.keys(record)) if (!FIELDS.includes(key)) throw invalid(`unknown field ${key}; allowed: ${FIELDS.join(", ")}`);
  const url = record.url;
  let parsed: URL | undefined;
  try { parsed = typeof url === "string" ? new URL(url) : undefined; } catch { parsed = undefined; }
  if (!parsed || (parsed.protocol !== "https:" && parsed.protocol !== "http:") || (url as string).length > 2048) {
    throw invalid(`url is required: an absolute http(s) URL of at most 2048 characters; got ${JSON.stringify(url) ?? "undefined"}`);
  }
  const events = record.events;
  if (!Array.isArray(events) || events.length === 0) throw invalid(`events is required: a non-empty array of ${WEBHOOK_EVENT_TYPES.join(", ")}; got ${JSON.stringify(events) ?? "undefined"}`);
  for (const event of events) if (!isWebhookEventType(event)) throw invalid(`events: unknown event type ${JSON.stringify(event)}; allowed: ${WEBHOOK_EVENT_TYPES.join(", ")}`);
  const description = record.description;
  if (description !== undefined && (typeof description !== "string" || description.length > 500)) throw invalid(`description must be a string of at most 500 characters; got ${JSON.stringify(description)}`);
  return { url: url as string, events: [...new Set(events as WebhookEventType[])], description: (description as string | undefined) ?? null };
}

export function webhooksRouter(deps: CompiledApiDeps): Router {
  const router = Router();

  router.post("/webhooks", (req, res) => {
    const row = insertEndpoint(deps.db, authOf(res).accountId, parseEndpoint(req.body), deps.clock());
    res.status(201).json(endpointView(row, true));
  });

  router.get("/webhooks", (_req, res) => {
    res.json({ object: "list", url: "/v1/webhooks", data: listEndpoints(deps.db, authOf(res).accountId).map((row) => endpointView(row)) });
  });

  router.delete("/webhooks/:endpointId", (req, res) => {
    const row = deleteEndpoint(deps.db, authOf(res).accountId, req.params.endpointId, deps.clock());
    if (!row) throw new AssayError("not_found", `no webhook endpoint ${JSON.stringify(req.params.endpointId)} on this account`);
    res.json(endpointView(row));
  });

  router.get("/webhooks/:endpointId/deliveries", (req, res) => {
    const endpoint = getEndpoint(deps.db, authOf(res).accountId, req.params.endpointId);
    if (!endpoint) throw new AssayError("not_found", `no webhook endpoint ${JSON.stringify(req.params.endpointId)} on this account`);
    res.json({ object: "list", url: `/v1/webhooks/${endpoint.id}/deliveries`, data: listDeliveries(deps.db, endpoint.id).map(deliveryView) });
  });

  return router;
}
