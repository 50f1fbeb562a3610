/** Webhook endpoints: POST/GET /v1/webhooks, DELETE /v1/webhooks/{endpoint_id}, the delivery log. */
import { z } from "zod";
import { WEBHOOK_EVENT_TYPES } from "../../webhooks/event-types.js";
import { component, NullableTimestamp, Timestamp } from "./common.js";

/** A webhook event type (spec section 6). */
export const WebhookEventType = component("WebhookEventType", z.enum(WEBHOOK_EVENT_TYPES, { error: `must be one of ${WEBHOOK_EVENT_TYPES.join(", ")}` }));

const URL_MESSAGE = "url is required: an absolute http(s) URL of at most 2048 characters";

/** POST /v1/webhooks body. */
export const CreateWebhookRequest = component("CreateWebhookRequest", z.strictObject({
  url: z.url({ protocol: /^https?$/, error: URL_MESSAGE }).max(2048, { error: URL_MESSAGE }),
  events: z.array(WebhookEventType, { error: `events is required: a non-empty array of ${WEBHOOK_EVENT_TYPES.join(", ")}` })
    .min(1, { error: `events is required: a non-empty array of ${WEBHOOK_EVENT_TYPES.join(", ")}` })
    .max(WEBHOOK_EVENT_TYPES.length, { error: `events must list each of ${WEBHOOK_EVENT_TYPES.join(", ")} at most once` }),
  description: z.string({ error: "description must be a string of at most 500 characters" })
    .max(500, { error: "description must be a string of at most 500 characters" }).optional(),
}, { error: `request body must be a JSON object {"url", "events", "description"?}` }));

/** A registered endpoint; `secret` (for checking signatures) only in the creation response. */
export const WebhookEndpoint = component("WebhookEndpoint", z.strictObject({
  object: z.literal("webhook_endpoint"),
  id: z.string(),
  url: z.string(),
  events: z.array(WebhookEventType),
  description: z.string().nullable(),
  created: Timestamp,
  deleted: z.literal(true).optional().describe("present on the DELETE response"),
  secret: z.string().optional().describe("only in the creation response; shown once"),
}));

/** One event's delivery to an endpoint. */
export const WebhookDelivery = component("WebhookDelivery", z.strictObject({
  object: z.literal("webhook_delivery"),
  event_id: z.string(),
  type: WebhookEventType,
  event_created: Timestamp,
  status: z.enum(["pending", "delivered", "failed", "cancelled"]),
  attempts: z.number().int().min(0),
  last_status: z.number().int().nullable().describe("HTTP status of the last attempt"),
  last_error: z.string().nullable(),
  next_attempt: NullableTimestamp.describe("pending deliveries only"),
  delivered_at: NullableTimestamp,
}));
