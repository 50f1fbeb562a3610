/**
 * An MJPEG viewer that hangs up while its grant is still being bound (the live-access check waits for
 * the store) lets go of everything its response took: the camera watch, the binding and its
 * connection slot. The route (coordinator/api/routes/streams.ts) on a real in-memory store, with a
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

describe("MJPEG: a viewer that leaves while its grant is being bound", () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

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
    // Only what mjpegRouter reads.
    const deps = {
      db, fleet, live, liveAccess, connectionCaps: caps, clock: () => new Date(), rejectedKeys: null,
      liveForwarding: { holderOf: async () => undefined, cellOfRun: async () => undefined },
    } as unknown as CompiledApiDeps;
    const app = express();
    app.use("/streams", mjpegRouter(deps));
    server = createServer(app);
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
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
});
