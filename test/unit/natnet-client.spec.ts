import assert from "node:assert/strict";
import { NatNetClient, NatNetError } from "../../cell-agent/devices/natnet/natnet-client.js";
import { encodeFrame } from "../../cell-agent/devices/natnet/natnet-messages.js";
import type { ObjectPose } from "../../cell-agent/hardware/types.js";
import { SimNatNetServer } from "../../simulators/natnet/natnet-server.js";
import { eventually } from "../support/eventually.js";
import { WorldMocapStream } from "../../simulators/natnet/world-mocap-stream.js";
import { SimWorld } from "../../simulators/world/sim-world.js";

const pose = (name: string, x: number): ObjectPose => ({ name, positionM: [x, 0.1, 0.015], orientation: [0, 0, 0.1, 0.995] });

const until = (condition: () => boolean, what: string) => eventually(what, condition, { deadlineMs: 2000, intervalMs: 2 });

describe("NatNetClient against the simulated NatNet server over UDP", function () {
  this.timeout(10_000);
  let server: SimNatNetServer;
  let client: NatNetClient | null = null;
  const clock = { ns: 0n, nowNs: () => clock.ns };

  beforeEach(async () => {
    server = await SimNatNetServer.start();
    clock.ns = 0n;
  });
  afterEach(async () => {
    await client?.close();
    client = null;
    await server.close();
  });

  const connect = async () => (client = await NatNetClient.connect({ serverAddress: "127.0.0.1", commandPort: server.port, localAddress: "127.0.0.1", modelDefRetryMs: 1 }, { clock }));

  it("connects (server info, model definitions) and reads named poses at float32 precision", async () => {
    server.sendFrame(0, 0, [pose("cube", 0.24), pose("gripper", 0.1)]);
    const c = await connect();
    assert.deepEqual(c.serverInfo.natNetVersion, [4, 1, 0, 0]);
    assert.deepEqual([...c.bodyNames], [[1, "cube"], [2, "gripper"]]);
    await assert.rejects(c.readPoses(), (e: unknown) => e instanceof NatNetError && e.code === "no_frames");
    server.sendFrame(1, 1 / 120, [pose("cube", 0.24), pose("gripper", 0.1)]);
    await c.waitForFrame(1, 2000);
    const { poses } = await c.readPoses();
    assert.deepEqual(poses.map((p) => p.name), ["cube", "gripper"]);
    assert.deepEqual(poses[0].positionM, [0.24, 0.1, 0.015].map(Math.fround));
    assert.deepEqual(poses[0].orientation, [0, 0, 0.1, 0.995].map(Math.fround));
    assert.equal(server.counters.connects, 1);
  });

  it("drops late frames, counts gaps, and learns a new body's name from fresh model definitions", async () => {
    server.sendFrame(0, 0, [pose("cube", 0.2)]);
    const c = await connect();
    server.sendFrame(5, 5 / 120, [pose("cube", 0.25)]);
    await c.waitForFrame(5, 2000);
    server.sendFrame(3, 3 / 120, [pose("cube", 0.9)]);
    server.dropNextFrames(2); // frames 6 and 7 are lost
    server.sendFrame(6, 6 / 120, [pose("cube", 0.9)]);
    server.sendFrame(7, 7 / 120, [pose("cube", 0.9)]);
    server.sendFrame(8, 8 / 120, [pose("cube", 0.26), pose("block-blue", 0.3)]);
    await c.waitForFrame(8, 2000);
    assert.equal(c.counters.lateFrames, 1);
    // Frame 0 went out before the client connected; 5 is its first, 6 and 7 were lost.
    assert.equal(c.counters.droppedFrames, 2);
    const { poses } = await c.readPoses();
    assert.deepEqual(poses.map((p) => [p.name, p.positionM[0]]), [["cube", Math.fround(0.26)], ["block-blue", Math.fround(0.3)]]);
    assert.ok(c.counters.modelDefRequests >= 2, "asked again for the new body's name");
  });

  it("counts malformed packets and keeps reading; reports a stale frame by the agent clock", async () => {
    server.sendFrame(0, 0, [pose("cube", 0.2)]);
    const c = await connect();
    const good = encodeFrame({ frameNumber: 1, rigidBodies: [{ id: 1, positionM: [0.3, 0, 0], orientation: [0, 0, 0, 1], meanErrorM: 0, trackingValid: true }], timestampS: 0, stampCameraMidExposure: 0n, stampDataReceived: 0n, stampTransmit: 0n, trackedModelsChanged: false }, [4, 1, 0, 0]);
    server.sendRaw(good.subarray(0, 30));
    server.sendRaw(Buffer.from([7, 0]));
    server.sendRaw(good);
    await c.waitForFrame(1, 2000);
    assert.equal(c.counters.malformedPackets, 2);
    assert.equal((await c.readPoses()).poses[0].positionM[0], Math.fround(0.3));
    clock.ns += 150_000_000n;
    await assert.rejects(c.readPoses(), (e: unknown) => e instanceof NatNetError && e.code === "stale" && /150 ms old/.test(e.message));
  });

  it("gives up connecting with a timeout error when nothing answers", async () => {
    const port = server.port;
    await server.close();
    server = await SimNatNetServer.start();
    await assert.rejects(
      NatNetClient.connect({ serverAddress: "127.0.0.1", commandPort: port, localAddress: "127.0.0.1", connectTimeoutMs: 300, connectRetryMs: 50 }),
      (e: unknown) => e instanceof NatNetError && e.code === "timeout" && /NAT_SERVERINFO/.test(e.message),
    );
  });

  it("streams a SimWorld's rigid bodies on simulated time: poses equal the world's within float32", async () => {
    const world = new SimWorld({ model: "so101", seed: 3 });
    world.placeScene({
      objects: { cube: { object: "cube", positionM: [0.24, -0.04, 0.015], yawRad: 0.3 } },
      lighting: "nominal",
      distractors: [{ object: "block-blue", positionM: [0.17, 0.06, 0.015], yawRad: 0 }],
      homeRad: new Array(6).fill(0),
    });
    const stream = new WorldMocapStream(world, server, { rateHz: 100, positionNoiseM: 0 });
    stream.sync();
    const c = await NatNetClient.connect({ serverAddress: "127.0.0.1", commandPort: server.port, localAddress: "127.0.0.1" }, { clock: { nowNs: () => world.tNs } });
    client = c;
    world.setGoals([0.3, 0.2, -0.2, 0.1, 0.5, 1.0]);
    for (let step = 1; step <= 20; step++) {
      world.advanceBy(0.025);
      const frame = stream.sync();
      assert.equal(frame, Math.floor(step * 2.5 + 1e-9));
      await c.waitForFrame(frame!, 2000);
      const got = await c.readPoses();
      assert.equal(got.tNs, world.tNs);
      const truth = world.poses();
      assert.deepEqual(got.poses.map((p) => p.name), truth.map((p) => p.name));
      got.poses.forEach((p, i) => {
        assert.deepEqual(p.positionM, truth[i].positionM.map(Math.fround));
        assert.deepEqual(p.orientation, truth[i].orientation.map(Math.fround));
      });
    }
    assert.equal(stream.sync(), null, "no new frame without simulated time passing");
    await until(() => c.counters.frames === 20, "20 frames");
  });
});
