/**
 * An MJPEG viewer that hangs up while its grant is still being bound (the live-access check waits for
 * the store) lets go of everything its response took: the camera watch, the binding and its
 * connection slot. No frame goes out before the binding's check has passed: a grant that lapses
 * then (the cell moved on to another account's run) ends the response without a picture. The route (coordinator/api/routes/streams.ts) on a real in-memory store, with a
 * fake hub and a live-access watch whose bind the test finishes when it chooses.
 */
import assert from "node:assert/strict";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import type { CompiledApiDeps } from "../../coordinator/api/api-deps.js";
import { OPERATOR_ACCOUNT_ID } from "../../coordinator/api/routes/kits.js";
import { mjpegRouter } from "../../coordinator/api/routes/streams.js";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import type { FleetView } from "../../coordinator/cells/fleet-view.js";
import { ensureAccount } from "../../coordinator/store/accounts-repo.js";
import { openSqliteDatabase } from "../../coordinator/store/database.js";
import type { CellStreamHub } from "../../coordinator/streams/cell-stream-hub.js";
import { ConnectionCaps } from "../../coordinator/streams/connection-caps.js";
import type { LiveAccess } from "../../coordinator/streams/live-access-watch.js";

/** The MJPEG route on a loopback server, with only the dependencies it reads. */
async function serveMjpeg(parts: Pick<CompiledApiDeps, "db" | "fleet" | "liveAccess" | "connectionCaps"> & { live: CellStreamHub }): Promise<Server> {
  const deps = {
    ...parts, clock: () => new Date(), rejectedKeys: null,
    liveForwarding: { holderOf: async () => undefined, cellOfRun: async () => undefined },
  } as unknown as CompiledApiDeps;
  const app = express();
  app.use("/streams", mjpegRouter(deps));
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

describe("MJPEG: a viewer whose grant is still being bound", () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => {
    if (!server) return resolve();
    server.close(() => resolve());
    // A failed check leaves its response open.
    server.closeAllConnections();
  }));

  it("releases the camera watch, the binding and the connection slot", async () => {
    const db = openSqliteDatabase(":memory:");
    await ensureAccount(db, OPERATOR_ACCOUNT_ID, "Operator", new Date().toISOString());
    const key = await createApiKey(db, OPERATOR_ACCOUNT_ID, ["streams:read"], new Date());
    const fleet: FleetView = { connectedCells: async () => [], assignedEpisodeOf: () => undefined };

    const watchers = new Set<object>();
    const live: CellStreamHub = {
      cameras: () => [{ name: "top", width: 4, height: 4, rateHz: 15 }],
      watchCamera: () => {
        const watcher = {};
        watchers.add(watcher);
        return () => watchers.delete(watcher);
      },
      watchState: () => () => undefined,
    };
    let bindings = 0;
    let finishBind!: () => void;
    const binding = new Promise<void>((resolve) => (finishBind = resolve));
    let bindCalled!: () => void;
    const bindStarted = new Promise<void>((resolve) => (bindCalled = resolve));
    const liveAccess: LiveAccess = {
      async bind() {
        bindings += 1;
        bindCalled();
        await binding;
        return () => void (bindings -= 1);
      },
      recheck: async () => undefined,
      stop: () => undefined,
    };
    const caps = new ConnectionCaps();
    server = await serveMjpeg({ db, fleet, live, liveAccess, connectionCaps: caps });
    const serverSocketClosed = new Promise<void>((resolve) => server!.once("connection", (socket) => socket.once("close", () => resolve())));

    const { port } = server.address() as AddressInfo;
    const req = request({ host: "127.0.0.1", port, path: "/streams/cells/cell-a/cameras/top.mjpeg", headers: { authorization: `Bearer ${key.secret}` } });
    req.on("error", () => undefined);
    const response = new Promise<number>((resolve) => req.on("response", (res) => resolve(res.statusCode!)));
    req.end();
    // Admitted (the headers come before the binding), then gone while the binding waits.
    assert.equal(await response, 200);
    await bindStarted;
    assert.equal(watchers.size, 1);
    assert.equal(caps.count("mjpeg_viewers", { keyId: key.row.id }), 1);
    req.destroy();
    await serverSocketClosed;
    finishBind();
    // The route's code after the binding runs in the microtasks before the next turn of the loop.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(watchers.size, 0, "camera watchers left");
    assert.equal(bindings, 0, "bindings left");
    assert.equal(caps.count("mjpeg_viewers", { keyId: key.row.id }), 0, "MJPEG slots left");
    await db.close();
  });

  for (const lapses of [true, false]) {
    it(lapses ? "sends no frame when the grant lapses while it is bound, and ends the response" : "sends only the newest frame of those that came while the grant was bound, then the next ones", async () => {
      const db = openSqliteDatabase(":memory:");
      await ensureAccount(db, OPERATOR_ACCOUNT_ID, "Operator", new Date().toISOString());
      const key = await createApiKey(db, OPERATOR_ACCOUNT_ID, ["streams:read"], new Date());
      const fleet: FleetView = { connectedCells: async () => [], assignedEpisodeOf: () => undefined };
      let emit!: (frame: { jpeg: Uint8Array; capturedAtMs: number }) => void;
      let watching!: () => void;
      const watched = new Promise<void>((resolve) => (watching = resolve));
      const live: CellStreamHub = {
        cameras: () => [{ name: "top", width: 4, height: 4, rateHz: 15 }],
        watchCamera: (_cell: string, _camera: string, listener: (frame: { jpeg: Uint8Array; capturedAtMs: number }) => void) => {
          emit = listener;
          watching();
          return () => (emit = () => undefined);
        },
        watchState: () => () => undefined,
      } as unknown as CellStreamHub;
      let finishBind!: () => void;
      const binding = new Promise<void>((resolve) => (finishBind = resolve));
      const liveAccess: LiveAccess = {
        async bind(_grant, close) {
          await binding;
          if (lapses) close("the cell moved on to another run");
          return () => undefined;
        },
        recheck: async () => undefined,
        stop: () => undefined,
      };
      server = await serveMjpeg({ db, fleet, live, liveAccess, connectionCaps: new ConnectionCaps() });
      const { port } = server.address() as AddressInfo;
      const req = request({ host: "127.0.0.1", port, path: "/streams/cells/cell-a/cameras/top.mjpeg", headers: { authorization: `Bearer ${key.secret}` } });
      const chunks: Buffer[] = [];
      let received!: () => void;
      const more = () => new Promise<void>((resolve) => (received = resolve));
      let next = more();
      const ended = new Promise<void>((resolve) => req.on("response", (res) => {
        res.on("data", (chunk: Buffer) => {
          chunks.push(chunk);
          received();
        });
        res.on("end", () => resolve());
      }));
      req.end();
      await watched;
      // Frames from the camera while the grant is being checked again.
      emit({ jpeg: Buffer.from("frame-1"), capturedAtMs: 1 });
      emit({ jpeg: Buffer.from("frame-2"), capturedAtMs: 2 });
      finishBind();
      if (lapses) {
        await ended;
        assert.equal(Buffer.concat(chunks).toString(), "--assayframe--\r\n");
      } else {
        await next;
        next = more();
        assert.match(Buffer.concat(chunks).toString(), /X-Captured-At-Ms: 2\r\n\r\nframe-2\r\n$/);
        emit({ jpeg: Buffer.from("frame-3"), capturedAtMs: 3 });
        while (!Buffer.concat(chunks).toString().includes("frame-3")) {
          await next;
          next = more();
        }
        assert.doesNotMatch(Buffer.concat(chunks).toString(), /frame-1/);
        req.destroy();
      }
      await db.close();
    });
  }
});
