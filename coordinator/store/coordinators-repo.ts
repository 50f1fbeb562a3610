/**
 * The coordinators sharing a database and their leases: rows of `coordinators`
 * (coordinator/cluster/coordinator-lease.ts renews them), and the PostgreSQL notifications they
 * exchange (coordinator/cluster/cluster-bus.ts).
 */
import type { Db } from "./database.js";

export function insertCoordinator(db: Db, row: { id: string; started: string; aliveUntil: string; baseUrl: string; grpcAddress: string }): void {
  db.prepare("INSERT INTO coordinators (id, started, alive_until, base_url, grpc_address) VALUES (?, ?, ?, ?, ?)")
    .run(row.id, row.started, row.aliveUntil, row.baseUrl, row.grpcAddress);
}

/** Forgets coordinators whose lease ran out before `before`. */
export function deleteCoordinatorsExpiredBefore(db: Db, before: string): void {
  db.prepare("DELETE FROM coordinators WHERE alive_until < ?").run(before);
}

/** Moves the coordinator's lease end to `aliveUntil` (renewal, or now on a clean stop). */
export function setCoordinatorAliveUntil(db: Db, id: string, aliveUntil: string): void {
  db.prepare("UPDATE coordinators SET alive_until = ? WHERE id = ?").run(aliveUntil, id);
}

export function setCoordinatorGrpcAddress(db: Db, id: string, address: string): void {
  db.prepare("UPDATE coordinators SET grpc_address = ? WHERE id = ?").run(address, id);
}

/** Ids of the coordinators whose lease runs to `at` or later. */
export function listLiveCoordinatorIds(db: Db, at: string): string[] {
  return (db.prepare("SELECT id FROM coordinators WHERE alive_until >= ?").all(at) as Array<{ id: string }>).map((r) => r.id);
}

/** The coordinator's lease end and public base URL, or undefined for an unknown id. */
export function findCoordinator(db: Db, id: string): { alive_until: string; base_url: string } | undefined {
  return db.prepare("SELECT alive_until, base_url FROM coordinators WHERE id = ?").get(id) as { alive_until: string; base_url: string } | undefined;
}

/** PostgreSQL only: NOTIFY `channel` with `payload` (delivered to listeners when the enclosing transaction commits). */
export function notifyChannel(db: Db, channel: string, payload: string): void {
  db.prepare("SELECT pg_notify(?, ?)").get(channel, payload);
}
