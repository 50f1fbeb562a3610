/**
 * The webhook outbox and its endpoints: rows of `webhook_endpoints`, `webhook_events` and
 * `webhook_deliveries`. A delivery is claimed by moving its `next_attempt_at` forward (a lease),
 * checked by the row count, so two coordinators never send one attempt twice.
 */
import type { Db } from "./database.js";

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

export interface WebhookEventRowOf<Type extends string = string> {
  id: string;
  account_id: string;
  type: Type;
  created: string;
  /** JSON. */
  data: string;
}

/** A pending delivery due now, with its endpoint's URL and secret and its event's columns. */
export type DueDeliveryRow = DeliveryRow & { url: string; secret: string; ev_id: string; ev_account: string; ev_type: string; ev_created: string; ev_data: string };

export async function insertEndpoint(db: Db, row: EndpointRow): Promise<void> {
  await db.prepare(
    `INSERT INTO webhook_endpoints (id, account_id, url, events, description, secret, created, deleted)
     VALUES (@id, @account_id, @url, @events, @description, @secret, @created, @deleted)`,
  ).run(row);
}

/** The account's live (not deleted) endpoint, or undefined. */
export async function findLiveEndpoint(db: Db, accountId: string, id: string): Promise<EndpointRow | undefined> {
  return await db.prepare("SELECT * FROM webhook_endpoints WHERE id = ? AND account_id = ? AND deleted IS NULL").get(id, accountId) as EndpointRow | undefined;
}

/** The account's live endpoints, oldest first. */
export async function listLiveEndpoints(db: Db, accountId: string): Promise<EndpointRow[]> {
  return await db.prepare("SELECT * FROM webhook_endpoints WHERE account_id = ? AND deleted IS NULL ORDER BY created, id").all(accountId) as EndpointRow[];
}

/** The id of the account's oldest live endpoint at exactly `url`, or undefined. */
export async function findLiveEndpointIdByUrl(db: Db, accountId: string, url: string): Promise<string | undefined> {
  const row = await db
    .prepare("SELECT id FROM webhook_endpoints WHERE account_id = ? AND url = ? AND deleted IS NULL ORDER BY created LIMIT 1")
    .get(accountId, url) as { id: string } | undefined;
  return row?.id;
}

/** Marks the endpoint deleted at `at` and cancels its undelivered events. */
export async function markEndpointDeleted(db: Db, id: string, at: string): Promise<void> {
  await db.prepare("UPDATE webhook_endpoints SET deleted = ? WHERE id = ?").run(at, id);
  await db.prepare("UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL WHERE endpoint_id = ? AND status = 'pending'").run(id);
}

/** The endpoint's delivery log, newest event first, with the event type. */
export async function listDeliveries(db: Db, endpointId: string, limit: number): Promise<Array<DeliveryRow & { type: string; created: string }>> {
  return await db
    .prepare(
      `SELECT d.*, e.type, e.created FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
       WHERE d.endpoint_id = ? ORDER BY e.created DESC, e.id DESC LIMIT ?`,
    )
    .all(endpointId, limit) as Array<DeliveryRow & { type: string; created: string }>;
}

export async function insertWebhookEvent(db: Db, row: WebhookEventRowOf): Promise<void> {
  await db.prepare("INSERT INTO webhook_events (id, account_id, type, created, data) VALUES (?, ?, ?, ?, ?)").run(row.id, row.account_id, row.type, row.created, row.data);
}

export async function findWebhookEvent(db: Db, eventId: string): Promise<WebhookEventRowOf | undefined> {
  return await db.prepare("SELECT * FROM webhook_events WHERE id = ?").get(eventId) as WebhookEventRowOf | undefined;
}

/** The account's live endpoints with the event types each subscribes to (JSON). */
export async function listEndpointSubscriptions(db: Db, accountId: string): Promise<Array<{ id: string; events: string }>> {
  return await db.prepare("SELECT id, events FROM webhook_endpoints WHERE account_id = ? AND deleted IS NULL").all(accountId) as Array<{ id: string; events: string }>;
}

/** Queues the event for the endpoint, due at `dueAt`. */
export async function insertPendingDelivery(db: Db, eventId: string, endpointId: string, dueAt: string): Promise<void> {
  await db.prepare("INSERT INTO webhook_deliveries (event_id, endpoint_id, status, attempts, next_attempt_at) VALUES (?, ?, 'pending', 0, ?)").run(eventId, endpointId, dueAt);
}

/** Pending deliveries due at `now` to live endpoints, earliest first. */
export async function listDueDeliveries(db: Db, now: string, limit: number): Promise<DueDeliveryRow[]> {
  return await db
    .prepare(
      `SELECT d.*, w.url, w.secret, e.id AS ev_id, e.account_id AS ev_account, e.type AS ev_type, e.created AS ev_created, e.data AS ev_data
       FROM webhook_deliveries d
       JOIN webhook_endpoints w ON w.id = d.endpoint_id
       JOIN webhook_events e ON e.id = d.event_id
       WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND w.deleted IS NULL
       ORDER BY d.next_attempt_at, e.created LIMIT ?`,
    )
    .all(now, limit) as DueDeliveryRow[];
}

/**
 * Claims a pending delivery for one attempt: moves its next_attempt_at from `dueAt` to `leaseUntil`.
 * False when another coordinator moved it first.
 */
export async function leaseDelivery(db: Db, eventId: string, endpointId: string, dueAt: string | null, leaseUntil: string): Promise<boolean> {
  return (await db
    .prepare("UPDATE webhook_deliveries SET next_attempt_at = ? WHERE event_id = ? AND endpoint_id = ? AND status = 'pending' AND next_attempt_at = ?")
    .run(leaseUntil, eventId, endpointId, dueAt)).changes === 1;
}

export async function markDelivered(db: Db, eventId: string, endpointId: string, attempts: number, status: number | null, at: string): Promise<void> {
  await db.prepare(
    "UPDATE webhook_deliveries SET status = 'delivered', attempts = ?, last_status = ?, last_error = NULL, next_attempt_at = NULL, delivered_at = ? WHERE event_id = ? AND endpoint_id = ?",
  ).run(attempts, status, at, eventId, endpointId);
}

/** Records a failed attempt: retried at `nextAttemptAt`, or `failed` for good when that is null. */
export async function recordFailedAttempt(
  db: Db,
  eventId: string,
  endpointId: string,
  o: { attempts: number; status: number | null; error: string; nextAttemptAt: string | null },
): Promise<void> {
  await db.prepare(
    "UPDATE webhook_deliveries SET status = ?, attempts = ?, last_status = ?, last_error = ?, next_attempt_at = ? WHERE event_id = ? AND endpoint_id = ? AND status = 'pending'",
  ).run(o.nextAttemptAt === null ? "failed" : "pending", o.attempts, o.status, o.error, o.nextAttemptAt, eventId, endpointId);
}
