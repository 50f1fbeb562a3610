/** The kit lifecycle: one legal step from each status, everything else a 422 naming the next step. */
import assert from "node:assert/strict";
import { KIT_STATUSES, nextKitOperation, nextKitStatus, type KitOperation } from "../../coordinator/domain/kit-state.js";
import { AssayError } from "../../coordinator/errors/assay-error.js";

const KIT = { id: "kit_1", name: "mugs" };
const OPS: KitOperation[] = ["receive", "track", "make-available"];

describe("kit state", () => {
  it("walks registered -> received -> tracked -> available", () => {
    assert.equal(nextKitStatus("registered", "receive", KIT), "received");
    assert.equal(nextKitStatus("received", "track", KIT), "tracked");
    assert.equal(nextKitStatus("tracked", "make-available", KIT), "available");
    assert.equal(nextKitOperation("available"), undefined);
  });

  it("rejects every other move with contract_validation_failed naming the status and the next step", () => {
    for (const status of KIT_STATUSES) {
      for (const op of OPS) {
        if (nextKitOperation(status) === op) continue;
        assert.throws(() => nextKitStatus(status, op, KIT), (error: unknown) => {
          assert.ok(error instanceof AssayError);
          assert.equal(error.code, "contract_validation_failed");
          assert.equal(error.status, 422);
          assert.match(error.message, new RegExp(`kit "mugs" \\(kit_1\\) is ${status}; cannot ${op} it`));
          const next = nextKitOperation(status);
          assert.match(error.message, next ? new RegExp(`next step is POST /v1/kits/kit_1/${next}`) : /no further step/);
          return true;
        });
      }
    }
  });
});
