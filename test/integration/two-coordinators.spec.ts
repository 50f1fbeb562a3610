/**
 * Two coordinators on one machine, started the way the README's "Two coordinators on one machine"
 * says (issue 29 item 5): both with ASSAY_DATABASE_URL=embedded on one data dir, the first without
 * a fleet (it starts the embedded PostgreSQL), the second with simulated cells listing both
 * coordinators (ASSAY_SIM_COORDINATORS). Both list the whole fleet, each holds one cell's stream;
 * a run submitted on one ends on the other. The coordinator that started the server stops first and leaves it to the other; the
 * last one out stops it cleanly; a restart finds the run again.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { nodeArgsFor } from "../../scripts/compiled-entry.mjs";
import { README_RUN_BODY } from "../fixtures.js";
import { eventually } from "../support/eventually.js";
import { freePort } from "../support/free-port.js";
import { waitForRunEnd } from "../support/run-end.js";
import { Watched } from "../support/watched.js";
import { TEST_ADMIN_KEY } from "./helpers.js";

type Json = Record<string, any>;

const REPO = resolve(import.meta.dirname, "..", "..");
const CELLS = ["so101-b", "so101-c"];

interface Coordinator {
  child: ChildProcess;
  base: string;
  output: Watched<string>;
  exited: Promise<void>;
}

describe("two coordinators on one machine (ASSAY_DATABASE_URL=embedded)", function () {
  this.timeout(240_000);
  let dir: string;
  const running: Coordinator[] = [];

  /** `npm start` with the README's settings plus `env`; resolves once it has started (and its fleet, if any). */
  async function start(env: Record<string, string>): Promise<Coordinator> {
    const http = await freePort();
    const child = spawn(process.execPath, await nodeArgsFor(join(REPO, "scripts", "start.ts")), {
      cwd: REPO,
      env: { ...process.env, ASSAY_DATABASE_URL: "embedded", ASSAY_DATA_DIR: dir, ASSAY_API_KEY: TEST_ADMIN_KEY, ASSAY_PORT: String(http), ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output = new Watched<string>();
    for (const stream of [child.stdout!, child.stderr!]) stream.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    const exited = new Promise<void>((done) => child.once("exit", () => done()));
    const coordinator = { child, base: `http://127.0.0.1:${http}`, output, exited };
    running.push(coordinator);
    const text = () => output.items.join("");
    await Promise.race([
      output.until(() => /simulated fleet: (off|\d+ cells)/.test(text())),
      exited.then(() => assert.fail(`npm start exited while starting: ${text()}`)),
    ]);
    return coordinator;
  }

  /** SIGTERM, as Ctrl-C stops it; resolves with everything it printed. */
  async function stop(coordinator: Coordinator): Promise<string> {
    if (coordinator.child.exitCode === null && coordinator.child.signalCode === null) coordinator.child.kill("SIGTERM");
    await coordinator.exited;
    return coordinator.output.items.join("");
  }

  async function get(coordinator: Coordinator, path: string, key = TEST_ADMIN_KEY): Promise<{ status: number; body: Json }> {
    const res = await fetch(coordinator.base + path, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, body: (await res.json()) as Json };
  }

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "assay-two-"));
    // As root, the embedded server runs as the postgres user, which must enter the data dir.
    chmodSync(dir, 0o755);
  });

  after(async function () {
    this.timeout(60_000);
    for (const coordinator of running) await stop(coordinator);
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a malformed ASSAY_SIM_COORDINATORS before starting anything, quoting the value", async () => {
    const child = spawn(process.execPath, await nodeArgsFor(join(REPO, "scripts", "start.ts")), {
      cwd: REPO,
      env: { ...process.env, ASSAY_DATA_DIR: dir, ASSAY_DATABASE_URL: "embedded", ASSAY_SIM_COORDINATORS: "127.0.0.1:50051,127.0.0.1" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.once("exit", (exitCode) => done(exitCode)));
    assert.equal(code, 2);
    assert.match(stderr, /ASSAY_SIM_COORDINATORS must be CellLink addresses "host:port" .*; got "127\.0\.0\.1"/);
    assert.equal(existsSync(join(dir, "embedded-postgres")), false, "no server started");
  });

  it("share one embedded PostgreSQL: both list the fleet, a run submitted on one ends on the other, the last one out stops the server and a restart finds the run", async () => {
    const [grpcA, grpcB] = [await freePort(), await freePort()];
    // The second coordinator first, so the cells find both up and spread over them.
    const b = await start({ ASSAY_GRPC_PORT: String(grpcB), ASSAY_FLEET: "none" });
    const bText = b.output.items.join("");
    assert.match(bText, /store\s+embedded PostgreSQL on 127\.0\.0\.1:\d+, in .*embedded-postgres \(started by this coordinator\)/);
    const operatorKey = /operator key\s+(asy_live_\S+)/.exec(bText)?.[1];
    assert.ok(operatorKey, bText);
    // The server: loopback only, a password asked for, kept owner-only in the data dir.
    const connectionFile = join(dir, "embedded-postgres", "connection.json");
    assert.equal(statSync(connectionFile).mode & 0o777, 0o600);
    const connection = JSON.parse(readFileSync(connectionFile, "utf8")) as { user: string; password: string; database: string };
    const port = Number(/embedded PostgreSQL on 127\.0\.0\.1:(\d+)/.exec(bText)![1]);
    const client = new pg.Client({ host: "127.0.0.1", port, ...connection });
    await client.connect();
    try {
      assert.deepEqual((await client.query("SHOW listen_addresses")).rows, [{ listen_addresses: "127.0.0.1" }]);
    } finally {
      await client.end();
    }
    const intruder = new pg.Client({ host: "127.0.0.1", port, user: connection.user, password: "guessed", database: connection.database });
    await assert.rejects(intruder.connect(), (error: { code?: string }) => error.code === "28P01");
    const a = await start({
      ASSAY_GRPC_PORT: String(grpcA), ASSAY_SIM_CELLS: CELLS.join(","), ASSAY_SIM_SPEED: "max", ASSAY_SIM_ENGINE: "kinematic",
      ASSAY_SIM_COORDINATORS: `127.0.0.1:${grpcA},127.0.0.1:${grpcB}`,
    });
    assert.match(a.output.items.join(""), /store\s+embedded PostgreSQL on .* \(joined\)/);

    // Each lists both cells connected, whichever coordinator holds their streams.
    for (const coordinator of [a, b]) {
      await eventually("both coordinators to list both cells", async () => {
        const cells = (await get(coordinator, "/v1/cells", operatorKey)).body.data as Json[];
        return CELLS.every((cell) => cells.some((c) => c.id === cell && c.connected === true));
      }, { deadlineMs: 60_000 });
    }

    // The cells spread: each coordinator holds one of the two streams (/metrics is open on loopback).
    for (const coordinator of [a, b]) {
      await eventually("each coordinator to hold one cell's stream", async () =>
        /^assay_cells_connected 1$/m.test(await (await fetch(`${coordinator.base}/metrics`)).text()), { deadlineMs: 60_000 });
    }

    const submitted = await fetch(`${a.base}/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ ...README_RUN_BODY, episodes: 2 }),
    });
    const run = (await submitted.json()) as Json;
    assert.equal(submitted.status, 201, JSON.stringify(run));
    const end = await waitForRunEnd(b.base, TEST_ADMIN_KEY, run.id);
    assert.equal(end.status, "completed", JSON.stringify(end.run));

    // The coordinator that started the server stops first: the server stays up for the other.
    assert.match(await stop(b), /embedded PostgreSQL: left running for \d+ connection\(s\) of other coordinators/);
    assert.equal((await get(a, `/v1/runs/${run.id}`)).body.status, "completed");
    // The last one out stops it: a clean shutdown, its pid file gone.
    assert.match(await stop(a), /embedded PostgreSQL: stopped \(no other coordinator connected\)/);
    assert.equal(existsSync(join(dir, "embedded-postgres", "data", "postmaster.pid")), false, "the server has shut down");

    // A restart starts the server on the same data and finds the run.
    const again = await start({ ASSAY_GRPC_PORT: String(await freePort()), ASSAY_FLEET: "none" });
    assert.match(again.output.items.join(""), /\(started by this coordinator\)/);
    const reread = await get(again, `/v1/runs/${run.id}`);
    assert.equal(reread.status, 200, JSON.stringify(reread.body));
    assert.equal(reread.body.status, "completed");
    assert.equal(reread.body.result.n, 2);
    assert.match(await stop(again), /embedded PostgreSQL: stopped/);
  });
});
