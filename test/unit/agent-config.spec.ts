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
});
