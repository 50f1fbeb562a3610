/**
 * Each coordinator on a shared PostgreSQL database holds a row in `coordinators` and renews its
 * lease every few seconds. Whatever a coordinator owns (a cell's link, an archive being made) is
 * another coordinator's to take over once that lease has run out: the process died or lost the
 * database.
 */
import { singleFlight } from "../async/single-flight.js";
import { randomBytes } from "node:crypto";
import type { Db } from "../store/database.js";
import {
  deleteCoordinatorsExpiredBefore, insertCoordinator, listLiveCoordinatorIds, setCoordinatorAliveUntil, setCoordinatorGrpcAddress,
} from "../store/coordinators-repo.js";

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
  stop(): Promise<void>;
}

export async function startCoordinatorLease(options: CoordinatorLeaseOptions): Promise<CoordinatorLease> {
  const { db } = options;
  const leaseMs = options.leaseMs ?? 10_000;
  const now = options.now ?? (() => new Date());
  const logger = options.logger ?? console;
  const { id } = options;
  const until = () => new Date(now().getTime() + leaseMs).toISOString();
  await insertCoordinator(db, { id, started: now().toISOString(), aliveUntil: until(), baseUrl: options.baseUrl, grpcAddress: options.grpcAddress });
  // Rows of coordinators long gone are only history; keep a day of it.
  await deleteCoordinatorsExpiredBefore(db, new Date(now().getTime() - 86_400_000).toISOString());
  const renewal = singleFlight(
    () => setCoordinatorAliveUntil(db, id, until()),
    (error) => logger.error(`coordinator lease: renewal failed (${(error as Error).message}); other coordinators take over this one's cells if it lapses`),
  );
  const timer = setInterval(() => void renewal.run(), options.renewMs ?? leaseMs / 4);
  timer.unref();
  return {
    leaseMs,
    async setGrpcAddress(address) {
      await setCoordinatorGrpcAddress(db, id, address);
    },
    async stop() {
      clearInterval(timer);
      await renewal.idle();
      try {
        await setCoordinatorAliveUntil(db, id, now().toISOString());
      } catch {
        // The database is gone: the lease runs out by itself.
      }
    },
  };
}

/** Ids of the coordinators whose lease has not run out at `now`. */
export async function liveCoordinatorIds(db: Db, now: Date): Promise<Set<string>> {
  return new Set(await listLiveCoordinatorIds(db, now.toISOString()));
}
