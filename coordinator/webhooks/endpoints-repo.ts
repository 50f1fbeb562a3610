/** Webhook endpoints of an account and the delivery log (rows of `webhook_endpoints` / `webhook_deliveries`). */
import { randomBase62 } from "../auth/api-keys.js";
import type { Db } from "../store/database.js";
import * as repo from "../store/webhooks-repo.js";
import type { DeliveryRow, EndpointRow } from "../store/webhooks-repo.js";

export type { DeliveryRow, EndpointRow } from "../store/webhooks-repo.js";
import type { WebhookEventType } from "./event-types.js";
import { transact } from "../store/tx.js";

export const WEBHOOK_SECRET_PREFIX = "whsec_";

export async function insertEndpoint(db: Db, accountId: string, input: { url: string; events: WebhookEventType[]; description: string | null }, now: Date): Promise<EndpointRow> {
  const row: EndpointRow = {
    id: `we_${randomBase62(20)}`,
    account_id: accountId,
    url: input.url,
    events: JSON.stringify(input.events),
    description: input.description,
    secret: WEBHOOK_SECRET_PREFIX + randomBase62(32),
    created: now.toISOString(),
    deleted: null,
  };
  await repo.insertEndpoint(db, row);
  return row;
}

/** The account's live (not deleted) endpoint, or undefined. */
export async function getEndpoint(db: Db, accountId: string, id: string): Promise<EndpointRow | undefined> {
  return await repo.findLiveEndpoint(db, accountId, id);
}

export async function listEndpoints(db: Db, accountId: string): Promise<EndpointRow[]> {
  return await repo.listLiveEndpoints(db, accountId);
}

/** Marks the endpoint deleted and cancels its undelivered events; returns the deleted row. */
export async function deleteEndpoint(db: Db, accountId: string, id: string, now: Date): Promise<EndpointRow | undefined> {
  return await transact(db, async (tx) => {
    const row = await getEndpoint(tx, accountId, id);
    if (!row) return undefined;
    const at = now.toISOString();
    await repo.markEndpointDeleted(tx, id, at);
    return { ...row, deleted: at };
  });
}

/** The endpoint's delivery log, newest event first, with the event type. */
export async function listDeliveries(db: Db, endpointId: string, limit = 100): Promise<Array<DeliveryRow & { type: string; created: string }>> {
  return await repo.listDeliveries(db, endpointId, limit);
}

/** The API's webhook_endpoint object; `secret` only in the creation response. */
export function endpointView(row: EndpointRow, withSecret = false): Record<string, unknown> {
  return {
    object: "webhook_endpoint",
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    created: row.created,
    ...(row.deleted ? { deleted: true } : {}),
    ...(withSecret ? { secret: row.secret } : {}),
  };
}

export function deliveryView(row: DeliveryRow & { type: string; created: string }): Record<string, unknown> {
  return {
    object: "webhook_delivery",
    event_id: row.event_id,
    type: row.type,
    event_created: row.created,
    status: row.status,
    attempts: row.attempts,
    last_status: row.last_status,
    last_error: row.last_error,
    next_attempt: row.status === "pending" ? row.next_attempt_at : null,
    delivered_at: row.delivered_at,
  };
}
