/** Webhook endpoints of an account and the delivery log (rows of `webhook_endpoints` / `webhook_deliveries`). */
import { randomBase62 } from "../auth/api-keys.js";
import type { Db } from "../store/database.js";
import type { WebhookEventType } from "./event-types.js";

export const WEBHOOK_SECRET_PREFIX = "whsec_";

export interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  /** JSON array of event types. */
  events: string;
  description: string | null;
  secret: string;
  created: string;
  deleted: string | null;
}

export interface DeliveryRow {
  event_id: string;
  endpoint_id: string;
  status: "pending" | "delivered" | "failed" | "cancelled";
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

export function insertEndpoint(db: Db, accountId: string, input: { url: string; events: WebhookEventType[]; description: string | null }, now: Date): EndpointRow {
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
  db.prepare(
    `INSERT INTO webhook_endpoints (id, account_id, url, events, description, secret, created, deleted)
     VALUES (@id, @account_id, @url, @events, @description, @secret, @created, @deleted)`,
  ).run(row);
  return row;
}

/** The account's live (not deleted) endpoint, or undefined. */
export function getEndpoint(db: Db, accountId: string, id: string): EndpointRow | undefined {
  return db.prepare("SELECT * FROM webhook_endpoints WHERE id = ? AND account_id = ? AND deleted IS NULL").get(id, accountId) as EndpointRow | undefined;
}

export function listEndpoints(db: Db, accountId: string): EndpointRow[] {
  return db.prepare("SELECT * FROM webhook_endpoints WHERE account_id = ? AND deleted IS NULL ORDER BY created, id").all(accountId) as EndpointRow[];
}

/** Marks the endpoint deleted and cancels its undelivered events; returns the deleted row. */
export function deleteEndpoint(db: Db, accountId: string, id: string, now: Date): EndpointRow | undefined {
  return db.transaction(() => {
    const row = getEndpoint(db, accountId, id);
    if (!row) return undefined;
    const at = now.toISOString();
    db.prepare("UPDATE webhook_endpoints SET deleted = ? WHERE id = ?").run(at, id);
    db.prepare("UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL WHERE endpoint_id = ? AND status = 'pending'").run(id);
    return { ...row, deleted: at };
  })();
}

/** The endpoint's delivery log, newest event first, with the event type. */
export function listDeliveries(db: Db, endpointId: string, limit = 100): Array<DeliveryRow & { type: string; created: string }> {
  return db
    .prepare(
      `SELECT d.*, e.type, e.created FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
       WHERE d.endpoint_id = ? ORDER BY e.created DESC, e.id DESC LIMIT ?`,
    )
    .all(endpointId, limit) as Array<DeliveryRow & { type: string; created: string }>;
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
