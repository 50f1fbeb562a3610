/**
 * The coordinators sharing a database and their leases: rows of `coordinators`
 * (coordinator/cluster/coordinator-lease.ts renews them), and the PostgreSQL notifications they
 * exchange (coordinator/cluster/cluster-bus.ts).
 */
import type { Db } from "./database.js";

export async function insertCoordinator(db: Db, row: { id: string; started: string; aliveUntil: string; baseUrl: string; grpcAddress: string }): Promise<void> {
  await db.prepare("INSERT INTO coordinators (id, started, alive_until, base_url, grpc_address) VALUES (?, ?, ?, ?, ?)")
    .run(row.id, row.started, row.aliveUntil, row.baseUrl, row.grpcAddress);
}

/** Forgets coordinators whose lease ran out before `before`. */
export async function deleteCoordinatorsExpiredBefore(db: Db, before: string): Promise<void> {
  await db.prepare("DELETE FROM coordinators WHERE alive_until < ?").run(before);
}

/** Moves the coordinator's lease end to `aliveUntil` (renewal, or now on a clean stop). */
export async function setCoordinatorAliveUntil(db: Db, id: string, aliveUntil: string): Promise<void> {
  await db.prepare("UPDATE coordinators SET alive_until = ? WHERE id = ?").run(aliveUntil, id);
}

export async function setCoordinatorGrpcAddress(db: Db, id: string, address: string): Promise<void> {
  await db.prepare("UPDATE coordinators SET grpc_address = ? WHERE id = ?").run(address, id);
}

/** Ids of the coordinators whose lease runs to `at` or later. */
export async function listLiveCoordinatorIds(db: Db, at: string): Promise<string[]> {
  return (await db.prepare("SELECT id FROM coordinators WHERE alive_until >= ?").all(at) as Array<{ id: string }>).map((r) => r.id);
}

/** The coordinator's lease end and public base URL, or undefined for an unknown id. */
export async function findCoordinator(db: Db, id: string): Promise<{ alive_until: string; base_url: string } | undefined> {
  return await db.prepare("SELECT alive_until, base_url FROM coordinators WHERE id = ?").get(id) as { alive_until: string; base_url: string } | undefined;
}

/** PostgreSQL only: NOTIFY `channel` with `payload` (delivered to listeners when the enclosing transaction commits). */
export async function notifyChannel(db: Db, channel: string, payload: string): Promise<void> {
  await db.prepare("SELECT pg_notify(?, ?)").get(channel, payload);
}

/** PostgreSQL only: NOTIFY `channel` with each payload in order, in one statement (listeners get them in that order). */
export async function notifyChannelMany(db: Db, channel: string, payloads: readonly string[]): Promise<void> {
  if (payloads.length === 0) return;
  await db.prepare(`SELECT ${payloads.map(() => "pg_notify(?, ?)").join(", ")}`).get(...payloads.flatMap((payload) => [channel, payload]));
}
