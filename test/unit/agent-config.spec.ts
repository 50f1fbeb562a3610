import { strict as assert } from "node:assert";
import { compileAgentConfig } from "../../cell-agent/config.js";

const required = { cellId: "so101-a", cellToken: "t", robotModel: "so101", environment: "tabletop@1", dataDir: "/tmp/x" };

describe("agent config", () => {
  it("fills the documented defaults", () => {
    const config = compileAgentConfig(required);
    assert.equal(config.coordinatorAddress, "127.0.0.1:50051");
    assert.equal(config.heartbeatIntervalMs, 1000);
    assert.deepEqual(config.reconnect, { initialMs: 200, maxMs: 10000, jitter: 0.5 });
    assert.equal(config.uploadChunkBytes, 262144);
  });
  it("rejects an unknown key by name", () => {
    assert.throws(() => compileAgentConfig({ ...required, heartbeatMs: 5 }), /unknown agent config key "heartbeatMs"/);
    assert.throws(() => compileAgentConfig({ ...required, reconnect: { initalMs: 5 } }), /"reconnect.initalMs"/);
  });
  it("names a missing required key", () => {
    assert.throws(() => compileAgentConfig({ ...required, cellToken: undefined }), /"cellToken" must be a non-empty string/);
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
