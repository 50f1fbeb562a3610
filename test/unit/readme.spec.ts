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
});
