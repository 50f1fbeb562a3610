import { strict as assert } from "node:assert";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McapIndexedReader } from "@mcap/core";
import jpeg from "jpeg-js";
import { McapRecorder } from "../../cell-agent/recording/mcap-recorder.js";
import { FileHandleReadable } from "../../cell-agent/recording/file-writable.js";

describe("agent MCAP recorder", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "agent-mcap-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("writes every channel with its schema and reads back through McapIndexedReader", async () => {
    const joints = ["a", "b"];
    const recorder = await McapRecorder.create(dir, "ep-1", { jointNames: joints, cameraNames: ["top"] });
    assert.ok(existsSync(join(dir, "ep-1.mcap.part")));
    const image = jpeg.encode({ width: 4, height: 4, data: Buffer.alloc(64, 200) }, 80).data;
    recorder.meta(1n, { phase: "start", firmware: "3.11", seed: 5 });
    for (let i = 0; i < 10; i++) {
      const t = BigInt(1_000_000_000 + i * 100_000_000);
      recorder.jointStates(t, { tNs: t, positionRad: [i, -i], velocityRadS: [0, 0], currentA: [0.1, 0.2], temperatureC: [30, 31] });
      recorder.jointTargets(t, [i + 0.5, -i]);
      recorder.wrench(t, { tNs: t, forceN: [1, 2, 3], torqueNm: [0, 0, 0.1] });
      recorder.objectPoses(t, t, [{ name: "cube", positionM: [0.2, 0, 0.015], orientation: [0, 0, 0, 1] }]);
      recorder.camera(t, "top", { tNs: t, width: 4, height: 4, jpeg: image });
    }
    recorder.event(2_000_000_000n, { tS: 1, name: "gripper_closed", detail: "" });
    recorder.meta(2_000_000_001n, { phase: "end", outcome: { outcome: "success" } });
    await recorder.finish(join(dir, "ep-1.mcap"));
    assert.ok(!existsSync(join(dir, "ep-1.mcap.part")));

    const handle = await open(join(dir, "ep-1.mcap"), "r");
    try {
      const reader = await McapIndexedReader.Initialize({ readable: new FileHandleReadable(handle) });
      const channels = [...reader.channelsById.values()];
      const schemaOf = (topic: string) => reader.schemasById.get(channels.find((c) => c.topic === topic)!.schemaId)!;
      assert.deepEqual(channels.map((c) => c.topic).sort(), [
        "/camera/top", "/events", "/ft_wrist", "/gt/object_poses", "/joint_states_measured", "/joint_targets_commanded", "/meta",
      ]);
      assert.ok(channels.every((c) => c.messageEncoding === "json"));
      assert.ok([...reader.schemasById.values()].every((s) => s.encoding === "jsonschema"));
      assert.equal(schemaOf("/camera/top").name, "foxglove.CompressedImage");

      const byTopic = new Map<string, unknown[]>();
      for await (const message of reader.readMessages()) {
        const topic = reader.channelsById.get(message.channelId)!.topic;
        byTopic.set(topic, [...(byTopic.get(topic) ?? []), JSON.parse(new TextDecoder().decode(message.data))]);
      }
      assert.equal(byTopic.get("/joint_states_measured")!.length, 10);
      assert.deepEqual((byTopic.get("/joint_states_measured")![3] as { name: string[]; position: number[] }).position, [3, -3]);
      const frame = byTopic.get("/camera/top")![0] as { format: string; data: string; frame_id: string; timestamp: { sec: number } };
      assert.equal(frame.format, "jpeg");
      assert.equal(frame.frame_id, "top");
      assert.deepEqual(Buffer.from(frame.data, "base64"), Buffer.from(image));
      assert.equal(frame.timestamp.sec, 1);
      assert.deepEqual(byTopic.get("/meta")!.map((m) => (m as { phase: string }).phase), ["start", "end"]);
      assert.deepEqual(byTopic.get("/events"), [{ t_s: 1, name: "gripper_closed", detail: "" }]);
      assert.deepEqual((byTopic.get("/gt/object_poses")![0] as { poses: unknown }).poses, {
        cube: { position: { x: 0.2, y: 0, z: 0.015 }, orientation: { x: 0, y: 0, z: 0, w: 1 } },
      });
    } finally {
      await handle.close();
    }
  });
});
