import assert from "node:assert/strict";
import { DEFAULT_DATABASE_POOL_SIZE, compileCoordinatorOptions } from "../../coordinator/options.js";

describe("ASSAY_DATABASE_POOL_SIZE (databasePoolSize)", () => {
  it("defaults to 10 connections", () => {
    assert.equal(DEFAULT_DATABASE_POOL_SIZE, 10);
    assert.equal(compileCoordinatorOptions({}).databasePoolSize, 10);
    assert.equal(compileCoordinatorOptions({ databasePoolSize: 3 }).databasePoolSize, 3);
  });

  it("refuses what is not a whole number from 1 to 100, naming the variable and the value", () => {
    for (const bad of [0, 101, 2.5, -1, Number.NaN]) {
      assert.throws(() => compileCoordinatorOptions({ databasePoolSize: bad }), (error: Error) => {
        assert.equal(error.message, `ASSAY_DATABASE_POOL_SIZE must be a whole number of connections from 1 to 100; got ${bad}`);
        return true;
      });
    }
  });
});
