/**
 * The durable webhook outbox. An event row and one delivery row per subscribed endpoint are
 * written by the caller's own SQLite transaction, together with the state change that caused the
 * event, so a coordinator crash can lose neither; the delivery worker sends what is due.
 */
import { randomBase62 } from "../auth/api-keys.js";
import type { Db } from "../store/database.js";
import type { WebhookEventType } from "./event-types.js";

export interface WebhookEventRow {
  id: string;
  account_id: string;
  type: WebhookEventType;
  created: string;
  /** JSON. */
  data: string;
}

/**
 * Records an event for `accountId` and queues it for every endpoint of the account subscribed to
 * `type` (endpoints registered later do not receive it). Returns the event id (`evt_...`).
 * NOTE: call it inside the transaction that makes the change the event reports, so both commit
 * or neither does.
 */
export function enqueueEvent(db: Db, accountId: string, type: WebhookEventType, data: object, at: Date = new Date()): string {
  const id = `evt_${randomBase62(24)}`;
  const created = at.toISOString();
  db.transaction(() => {
    db.prepare("INSERT INTO webhook_events (id, account_id, type, created, data) VALUES (?, ?, ?, ?, ?)").run(id, accountId, type, created, JSON.stringify(data));
    const endpoints = db
      .prepare("SELECT id, events FROM webhook_endpoints WHERE account_id = ? AND deleted IS NULL")
      .all(accountId) as Array<{ id: string; events: string }>;
    const insert = db.prepare(
      "INSERT INTO webhook_deliveries (event_id, endpoint_id, status, attempts, next_attempt_at) VALUES (?, ?, 'pending', 0, ?)",
    );
    for (const endpoint of endpoints) {
      if ((JSON.parse(endpoint.events) as string[]).includes(type)) insert.run(id, endpoint.id, created);
    }
  })();
  return id;
}

/** `enqueueEvent` for the account that owns `runId`; returns undefined when the run is unknown. */
export function enqueueRunEvent(db: Db, runId: string, type: WebhookEventType, data: object, at?: Date): string | undefined {
  const row = db.prepare("SELECT account_id FROM runs WHERE id = ?").get(runId) as { account_id: string } | undefined;
  return row ? enqueueEvent(db, row.account_id, type, data, at) : undefined;
}

export function getEvent(db: Db, eventId: string): WebhookEventRow | undefined {
  return db.prepare("SELECT * FROM webhook_events WHERE id = ?").get(eventId) as WebhookEventRow | undefined;
}

/** The body POSTed to an endpoint: `{id, object: "event", type, created, data}`. */
export function eventPayload(row: WebhookEventRow): string {
  return JSON.stringify({ id: row.id, object: "event", type: row.type, created: row.created, data: JSON.parse(row.data) as unknown });
}
