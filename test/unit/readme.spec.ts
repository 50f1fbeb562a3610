import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { README_RUN_BODY } from "../fixtures.js";

describe("README quick start", () => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

  it("submits exactly the body the tests run", () => {
    const match = /-d '(\{"kind":"run".*?\})'/.exec(readme);
    assert.ok(match, "README has a POST /v1/runs body in -d '...'");
    assert.deepEqual(JSON.parse(match[1]), README_RUN_BODY);
  });

  it("shows the two commands that matter", () => {
    assert.match(readme, /npm ci && npm start/);
    assert.match(readme, /npm test/);
  });

  it("starts two coordinators on one machine with the settings two-coordinators.spec.ts uses", () => {
    assert.match(readme, /^ASSAY_DATABASE_URL=embedded ASSAY_PORT=8081 ASSAY_GRPC_PORT=50052 ASSAY_FLEET=none npm start$/m);
    assert.match(readme, /^ASSAY_DATABASE_URL=embedded ASSAY_SIM_COORDINATORS=127\.0\.0\.1:50051,127\.0\.0\.1:50052 npm start$/m);
  });
});
