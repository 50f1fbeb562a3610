/**
 * ROS image topics through the simulator's rosbridge: the agent's RosCamera on the RosMotorBus link,
 * against SimRosbridgeServer publishing sensor_msgs/CompressedImage and sensor_msgs/Image.
 */
import { strict as assert } from "node:assert";
import jpeg from "jpeg-js";
import { RosMotorBus } from "../../cell-agent/devices/ros/ros-motor-bus.js";
import { SimRosbridgeServer } from "../../simulators/rosbridge/rosbridge-server.js";
import { SimRosRobot } from "../../simulators/rosbridge/sim-ros-robot.js";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { eventually } from "../support/eventually.js";

const joints = loadFirmwarePins().models.find((m) => m.id === "g1")!.joints;
const TOP = "/camera/top/image_raw/compressed";
const RAW = "/camera/wrist/image_raw";

/** A solid-colour JPEG, encoded by the test itself. */
function solidJpeg(width: number, height: number, rgb: [number, number, number]): Uint8Array {
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) data.set([...rgb, 255], i * 4);
  return new Uint8Array(jpeg.encode({ data, width, height }, 90).data);
}

const header = (tNs: bigint) => ({ stamp: { sec: Number(tNs / 1_000_000_000n), nanosec: Number(tNs % 1_000_000_000n) }, frame_id: "top_optical" });

describe("RosCamera: ROS image topics through the simulated rosbridge", function () {
  this.timeout(8000);
  let server: SimRosbridgeServer;
  let bus: RosMotorBus;

  beforeEach(async () => {
    server = await SimRosbridgeServer.start({ robot: SimRosRobot.forModel("g1", {}), jointStatesRateHz: 100 });
    server.advertiseTopic(TOP, "sensor_msgs/msg/CompressedImage");
    server.advertiseTopic(RAW, "sensor_msgs/msg/Image");
    bus = new RosMotorBus({ url: server.url, jointNames: joints, maxStateAgeMs: 250, reconnect: { initialMs: 20, maxMs: 400, jitter: 0 } });
    await bus.waitUntilReady(3000);
  });
  afterEach(async () => {
    await bus.close();
    await server.close();
  });

  it("gives CompressedImage JPEGs as sent, stamped with the header stamp mapped onto the agent clock", async () => {
    const camera = bus.openCamera({ name: "top", topic: TOP, type: "sensor_msgs/msg/CompressedImage", rateHz: 30, firstFrameTimeoutMs: 20 });
    const image = solidJpeg(64, 48, [200, 30, 30]);
    // The robot's ROS time: an epoch far from the agent's monotonic clock, so it is offset onto it.
    let stampNs = 1_700_000_000_000_000_000n;
    // The subscription reaches the server after the link connects: publish until the first frame is in.
    const first = await eventually("the first frame on " + TOP, async () => {
      server.publish(TOP, { header: header(stampNs), format: "jpeg", data: Buffer.from(image).toString("base64") });
      return camera.capture().catch(() => undefined);
    }, { deadlineMs: 3000, intervalMs: 10 });
    assert.deepEqual([first.width, first.height], [64, 48]);
    assert.deepEqual(Buffer.from(first.jpeg), Buffer.from(image));
    assert.ok(first.tNs <= first.receivedNs!, "never stamped after it arrived");
    const clock = camera.timestampClock()!;
    assert.equal(clock.kind, "device_offset");
    assert.match(clock.description, /the ROS header stamp of \/camera\/top\/image_raw\/compressed/);
    stampNs += 33_333_333n;
    server.publish(TOP, { header: header(stampNs), format: "rgb8; jpeg compressed bgr8", data: Buffer.from(image).toString("base64") });
    const second = await eventually("the second frame", async () => {
      const frame = await camera.capture();
      return frame !== first && frame;
    }, { deadlineMs: 3000, intervalMs: 5 });
    assert.ok(second.tNs > first.tNs && second.tNs - first.tNs <= 33_333_333n, `capture times ${first.tNs} then ${second.tNs}: 33 ms apart on the robot, never more on the agent`);
  });

  it("encodes sensor_msgs/Image (rgb8) to JPEG, and counts a PNG CompressedImage and a 25-megapixel Image as malformed", async () => {
    const camera = bus.openCamera({ name: "wrist", topic: RAW, type: "sensor_msgs/msg/Image", rateHz: 30, firstFrameTimeoutMs: 20, maxFrameAgeMs: 60_000 });
    const width = 8;
    const height = 4;
    const pixels = Buffer.alloc(width * height * 3);
    for (let i = 0; i < width * height; i++) pixels.set([20, 180, 60], i * 3);
    const frame = await eventually("the first raw frame", async () => {
      server.publish(RAW, { header: header(5_000_000_000n), height, width, encoding: "rgb8", is_bigendian: 0, step: width * 3, data: pixels.toString("base64") });
      return camera.capture().catch(() => undefined);
    }, { deadlineMs: 3000, intervalMs: 10 });
    assert.deepEqual([frame.width, frame.height], [width, height]);
    const decoded = jpeg.decode(frame.jpeg);
    const [r, g, b] = decoded.data.subarray(0, 3);
    assert.ok(Math.abs(r! - 20) < 12 && Math.abs(g! - 180) < 12 && Math.abs(b! - 60) < 12, `first pixel ${r},${g},${b}`);

    const png = bus.openCamera({ name: "top", topic: TOP, type: "sensor_msgs/msg/CompressedImage", rateHz: 30, firstFrameTimeoutMs: 20 });
    await eventually("a malformed count for the png frame", () => {
      server.publish(TOP, { header: header(1n), format: "png", data: "iVBORw0KGgo=" });
      return bus.stats().malformedMessages > 0;
    }, { deadlineMs: 3000, intervalMs: 10 });
    const before = bus.stats().malformedMessages;
    await eventually("a malformed count for the oversized raw image", () => {
      server.publish(RAW, { header: header(6_000_000_000n), height: 5000, width: 5000, encoding: "mono8", step: 5000, data: "AAAA" });
      return bus.stats().malformedMessages > before;
    }, { deadlineMs: 3000, intervalMs: 10 });
    assert.equal((await camera.capture()).width, width, "the oversized image replaced nothing");
    await assert.rejects(png.capture(), /camera top: nothing received on \/camera\/top\/image_raw\/compressed \(sensor_msgs\/msg\/CompressedImage\) yet/);
  });
});
