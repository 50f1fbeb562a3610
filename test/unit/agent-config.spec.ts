import { strict as assert } from "node:assert";
import { compileAgentConfig } from "../../cell-agent/config.js";

const required = { cellId: "so101-a", cellToken: "t", robotModel: "so101", environment: "tabletop@1", dataDir: "/tmp/x" };

describe("agent config", () => {
  it("fills the documented defaults", () => {
    const config = compileAgentConfig(required);
    assert.deepEqual(config.coordinatorAddresses, ["127.0.0.1:50051"]);
    assert.equal(config.heartbeatIntervalMs, 1000);
    assert.deepEqual(config.reconnect, { initialMs: 200, maxMs: 10000, jitter: 0.5 });
    assert.equal(config.uploadChunkBytes, 262144);
  });
  it("rejects an unknown key by name", () => {
    assert.throws(() => compileAgentConfig({ ...required, heartbeatMs: 5 }), /unknown agent config key "heartbeatMs"/);
    assert.throws(() => compileAgentConfig({ ...required, reconnect: { initalMs: 5 } }), /"reconnect.initalMs"/);
  });
  it("takes a list of coordinator addresses, in order", () => {
    const config = compileAgentConfig({ ...required, coordinatorAddresses: ["coord-a.lab:50051", "10.0.0.8:50051"] });
    assert.deepEqual(config.coordinatorAddresses, ["coord-a.lab:50051", "10.0.0.8:50051"]);
  });
  it("still takes one coordinatorAddress, as a list of one", () => {
    assert.deepEqual(compileAgentConfig({ ...required, coordinatorAddress: "coord.lab:50051" }).coordinatorAddresses, ["coord.lab:50051"]);
    assert.throws(() => compileAgentConfig({ ...required, coordinatorAddress: "coord.lab" }), /"coordinatorAddress" must be "host:port" with a port from 1 to 65535, e.g. "coord.lab:50051"; got "coord.lab"/);
  });
  it("refuses both address keys, saying which to keep", () => {
    assert.throws(
      () => compileAgentConfig({ ...required, coordinatorAddress: "coord-a.lab:50051", coordinatorAddresses: ["coord-b.lab:50051"] }),
      /gives both "coordinatorAddress" \("coord-a.lab:50051"\) and "coordinatorAddresses" \(\["coord-b.lab:50051"\]\); keep only "coordinatorAddresses", listing every coordinator the cell may use/,
    );
  });
  it("refuses an empty list, a malformed entry by its index, and a coordinator listed twice", () => {
    assert.throws(() => compileAgentConfig({ ...required, coordinatorAddresses: [] }), /"coordinatorAddresses" must be a non-empty list of "host:port"/);
    assert.throws(() => compileAgentConfig({ ...required, coordinatorAddresses: "coord.lab:50051" }), /"coordinatorAddresses" must be a non-empty list of "host:port".*got "coord.lab:50051"/);
    assert.throws(() => compileAgentConfig({ ...required, coordinatorAddresses: ["coord-a.lab:50051", "coord-b.lab:70000"] }), /"coordinatorAddresses\[1\]" must be "host:port" with a port from 1 to 65535.*got "coord-b.lab:70000"/);
    assert.throws(() => compileAgentConfig({ ...required, coordinatorAddresses: ["coord-a.lab:50051", 50051] }), /"coordinatorAddresses\[1\]" must be "host:port".*got 50051/);
    assert.throws(
      () => compileAgentConfig({ ...required, coordinatorAddresses: ["coord-a.lab:50051", "coord-b.lab:50051", "Coord-A.lab:50051"] }),
      /"coordinatorAddresses" lists "coord-a.lab:50051" twice \(entries 0 and 2\); list each coordinator once/,
    );
  });
  it("names a missing required key", () => {
    assert.throws(() => compileAgentConfig({ ...required, cellToken: undefined }), /"cellToken" must be a non-empty string/);
  });
  it("takes a V4L2 camera by device path with format, size and rate, and says what is wrong", () => {
    const config = compileAgentConfig({ ...required, cameras: [{ name: "wrist", device: "/dev/video2" }, { name: "top", device: "/dev/v4l/by-id/usb-cam-video-index0", inputFormat: "yuyv422", width: 1280, height: 720, rateHz: 15 }] });
    assert.deepEqual(config.cameras[0], { kind: "v4l2", name: "wrist", device: "/dev/video2", rateHz: 30, inputFormat: "mjpeg", width: 640, height: 480, frameRateHz: 30 });
    assert.deepEqual(config.cameras[1], { kind: "v4l2", name: "top", device: "/dev/v4l/by-id/usb-cam-video-index0", rateHz: 15, inputFormat: "yuyv422", width: 1280, height: 720, frameRateHz: 15 });
    assert.equal(compileAgentConfig({ ...required, cameras: [{ name: "top", url: "http://127.0.0.1:8080/s" }] }).cameras[0]!.kind, "mjpeg-http");
    assert.throws(() => compileAgentConfig({ ...required, cameras: [{ name: "top", device: "video0" }] }), /"cameras\[0\]\.device" must be a video device path such as "\/dev\/video0".*got "video0"/);
    assert.throws(() => compileAgentConfig({ ...required, cameras: [{ name: "top", device: "/dev/video0", inputFormat: "h265" }] }), /"cameras\[0\]\.inputFormat" must be one of "mjpeg", "yuyv422".*got "h265"/);
    assert.throws(() => compileAgentConfig({ ...required, cameras: [{ name: "top", device: "/dev/video0", url: "http://x/s" }] }), /"cameras\[0\]" needs exactly one of "device".*"url".*or "rosTopic"/);
    assert.throws(() => compileAgentConfig({ ...required, cameras: [{ name: "top", url: "http://x/s", width: 640 }] }), /"cameras\[0\]\.width" applies to "device" cameras only/);
  });
  it("takes a ROS robot's image topic as a camera, and only on a ROS robot", () => {
    const ros = { kind: "ros", url: "ws://10.0.0.5:9090" };
    const config = compileAgentConfig({ ...required, robotModel: "g1", motors: ros, cameras: [{ name: "head", rosTopic: "/camera/color/image_raw/compressed" }, { name: "wrist", rosTopic: "/wrist/image_raw", rosType: "sensor_msgs/msg/Image", rateHz: 15 }] });
    assert.deepEqual(config.cameras[0], { kind: "ros", name: "head", rosTopic: "/camera/color/image_raw/compressed", rosType: "sensor_msgs/msg/CompressedImage", rateHz: 30 });
    assert.equal(config.cameras[1]!.kind === "ros" && config.cameras[1]!.rosType, "sensor_msgs/msg/Image");
    assert.throws(() => compileAgentConfig({ ...required, cameras: [{ name: "head", rosTopic: "/camera/image" }] }), /"cameras\[0\]\.rosTopic" needs a ROS robot/);
    assert.throws(() => compileAgentConfig({ ...required, robotModel: "g1", motors: ros, cameras: [{ name: "head", rosTopic: "/camera/image", rosType: "sensor_msgs/msg/PointCloud2" }] }), /"cameras\[0\]\.rosType" must be one of .*got "sensor_msgs\/msg\/PointCloud2"/);
  });
  it("takes a camera's calibration and names what is wrong in one", () => {
    const calibration = {
      width: 640, height: 480, model: "pinhole", fx: 600, fy: 601, cx: 320, cy: 240, distortion: [0.1, -0.2, 0, 0, 0],
      extrinsics: { parent_frame: "world", translation_m: [0.2, 0, 0.9], rotation_xyzw: [1, 0, 0, 0] },
    };
    const camera = { name: "top", url: "http://127.0.0.1:8080/stream" };
    const config = compileAgentConfig({ ...required, cameras: [{ ...camera, calibration }] });
    assert.deepEqual(config.cameras[0]!.calibration, calibration);
    assert.equal(compileAgentConfig({ ...required, cameras: [camera] }).cameras[0]!.calibration, undefined);
    assert.throws(() => compileAgentConfig({ ...required, cameras: [{ ...camera, calibration: { ...calibration, fx: undefined } }] }), /cameras\[0\]\.calibration\.fx/);
    assert.throws(
      () => compileAgentConfig({ ...required, cameras: [{ ...camera, calibration: { ...calibration, extrinsics: { ...calibration.extrinsics, rotation_xyzw: [0, 0, 1] } } }] }),
      /cameras\[0\]\.calibration\.extrinsics\.rotation_xyzw" must be 4 numbers/,
    );
  });
});
