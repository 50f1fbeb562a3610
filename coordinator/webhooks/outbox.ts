/**
 * The durable webhook outbox. An event row and one delivery row per subscribed endpoint are
 * written by the caller's own SQLite transaction, together with the state change that caused the
 * event, so a coordinator crash can lose neither; the delivery worker sends what is due.
 */
import { randomBase62 } from "../auth/api-keys.js";
import type { Db } from "../store/database.js";
import { findRunAccountId } from "../store/runs-repo.js";
import {
  findWebhookEvent, insertPendingDelivery, insertWebhookEvent, listEndpointSubscriptions, type WebhookEventRowOf,
} from "../store/webhooks-repo.js";
import type { WebhookEventType } from "./event-types.js";
import { transact, type Tx } from "../store/tx.js";

export type WebhookEventRow = WebhookEventRowOf<WebhookEventType>;

/**
 * Records an event for `accountId` and queues it for every endpoint of the account subscribed to
 * `type` (endpoints registered later do not receive it). Returns the event id (`evt_...`).
 * NOTE: call it inside the transaction that makes the change the event reports, so both commit
 * or neither does.
 */
export async function enqueueEvent(db: Db, accountId: string, type: WebhookEventType, data: object, at: Date = new Date()): Promise<string> {
  return await recordEvent(db, accountId, type, data, at, async (tx) =>
    (await listEndpointSubscriptions(tx, accountId)).filter((endpoint) => (JSON.parse(endpoint.events) as string[]).includes(type)).map((endpoint) => endpoint.id));
}

/**
 * Records an event for `accountId` and queues it for the one endpoint `endpointId`, whatever it
 * subscribes to (a delivery the caller named, such as a threshold run's on_verified webhook).
 * Returns the event id. NOTE: as `enqueueEvent`, call it inside the transaction of the change.
 */
export async function enqueueEventForEndpoint(db: Db, accountId: string, endpointId: string, type: WebhookEventType, data: object, at: Date = new Date()): Promise<string> {
  return await recordEvent(db, accountId, type, data, at, async () => [endpointId]);
}

/**
 * An event as the outbox stores it, for a repository that records it in the statement of the change itself
 * (store/sequenced-reports-repo.ts): its id, type, creation time (the deliveries' due time) and data as JSON.
 */
export function outboxEvent(type: WebhookEventType, data: object, at: Date = new Date()): { id: string; type: WebhookEventType; created: string; data: string } {
  return { id: `evt_${randomBase62(24)}`, type, created: at.toISOString(), data: JSON.stringify(data) };
}

/** Writes the event and one pending delivery, due at once, per endpoint `endpoints()` names; returns the event id. */
async function recordEvent(db: Db, accountId: string, type: WebhookEventType, data: object, at: Date, endpoints: (tx: Tx) => Promise<string[]>): Promise<string> {
  const { id, created, data: json } = outboxEvent(type, data, at);
  await transact(db, async (tx) => {
    await insertWebhookEvent(tx, { id, account_id: accountId, type, created, data: json });
    for (const endpointId of await endpoints(tx)) await insertPendingDelivery(tx, id, endpointId, created);
  });
  return id;
}

/** `enqueueEvent` for the account that owns `runId`; returns undefined when the run is unknown. */
export async function enqueueRunEvent(db: Db, runId: string, type: WebhookEventType, data: object, at?: Date): Promise<string | undefined> {
  const accountId = await findRunAccountId(db, runId);
  return accountId === undefined ? undefined : enqueueEvent(db, accountId, type, data, at);
}

export async function getEvent(db: Db, eventId: string): Promise<WebhookEventRow | undefined> {
  return await findWebhookEvent(db, eventId) as WebhookEventRow | undefined;
}

/** The body POSTed to an endpoint: `{id, object: "event", type, created, data}`. */
export function eventPayload(row: WebhookEventRow): string {
  return JSON.stringify({ id: row.id, object: "event", type: row.type, created: row.created, data: JSON.parse(row.data) as unknown });
}
