/**
 * Each coordinator on a shared PostgreSQL database holds a row in `coordinators` and renews its
 * lease every few seconds. Whatever a coordinator owns (a cell's link, an archive being made) is
 * another coordinator's to take over once that lease has run out: the process died or lost the
 * database.
 */
import { randomBytes } from "node:crypto";
import type { Db } from "../store/database.js";

/** A new coordinator id, `crd_...`: one per process start. */
export function newCoordinatorId(): string {
  return `crd_${randomBytes(9).toString("base64url")}`;
}

export interface CoordinatorLeaseOptions {
  db: Db;
  /** This coordinator's id (newCoordinatorId()). */
  id: string;
  /** This process's public base URL and gRPC address, for operators reading the table. */
  baseUrl: string;
  grpcAddress: string;
  /** How long a lease lasts without renewal. Default 10000 ms. */
  leaseMs?: number;
  /** Renewal period. Default leaseMs / 4. */
  renewMs?: number;
  now?: () => Date;
  logger?: { error(message: string): void };
}

export interface CoordinatorLease {
  readonly leaseMs: number;
  /** Records the CellLink address once its port is known. */
  setGrpcAddress(address: string): void;
  /** Ends the lease now (a clean stop): others take over at once. */
  stop(): void;
}

export function startCoordinatorLease(options: CoordinatorLeaseOptions): CoordinatorLease {
  const { db } = options;
  const leaseMs = options.leaseMs ?? 10_000;
  const now = options.now ?? (() => new Date());
  const logger = options.logger ?? console;
  const { id } = options;
  const until = () => new Date(now().getTime() + leaseMs).toISOString();
  db.prepare("INSERT INTO coordinators (id, started, alive_until, base_url, grpc_address) VALUES (?, ?, ?, ?, ?)")
    .run(id, now().toISOString(), until(), options.baseUrl, options.grpcAddress);
  // Rows of coordinators long gone are only history; keep a day of it.
  db.prepare("DELETE FROM coordinators WHERE alive_until < ?").run(new Date(now().getTime() - 86_400_000).toISOString());
  const timer = setInterval(() => {
    try {
      db.prepare("UPDATE coordinators SET alive_until = ? WHERE id = ?").run(until(), id);
    } catch (error) {
      logger.error(`coordinator lease: renewal failed (${(error as Error).message}); other coordinators take over this one's cells if it lapses`);
    }
  }, options.renewMs ?? leaseMs / 4);
  timer.unref();
  return {
    leaseMs,
    setGrpcAddress(address) {
      db.prepare("UPDATE coordinators SET grpc_address = ? WHERE id = ?").run(address, id);
    },
    stop() {
      clearInterval(timer);
      try {
        db.prepare("UPDATE coordinators SET alive_until = ? WHERE id = ?").run(now().toISOString(), id);
      } catch {
        // The database is gone: the lease runs out by itself.
      }
    },
  };
}

/** Ids of the coordinators whose lease has not run out at `now`. */
export function liveCoordinatorIds(db: Db, now: Date): Set<string> {
  const rows = db.prepare("SELECT id FROM coordinators WHERE alive_until >= ?").all(now.toISOString()) as Array<{ id: string }>;
  return new Set(rows.map((r) => r.id));
}
