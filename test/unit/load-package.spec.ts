/** Packages loaded on first use (protocol/load-package.ts): the module when it loads, a plain message when it does not. */
import assert from "node:assert/strict";
import { loadSharp } from "../../protocol/image/load-sharp.js";
import { loadPackage } from "../../protocol/load-package.js";

describe("packages loaded on first use", () => {
  it("gives the module when it loads", async () => {
    assert.equal(await loadPackage(async () => 42, "the answer"), 42);
    assert.equal(typeof (await loadSharp()), "function");
  });

  it("names the package, the loader's first line and what to do when it does not, keeping the error as the cause", async () => {
    const failure = new Error("Cannot find module 'roslib'\nRequire stack:\n- /somewhere");
    await assert.rejects(loadPackage(() => Promise.reject(failure), "the ROS client library (roslib)"), (error: Error) => {
      assert.equal(error.message, "the ROS client library (roslib) could not be loaded (Cannot find module 'roslib'); is the installation complete (npm ci) and built for this platform?");
      assert.equal(error.cause, failure);
      return true;
    });
    await assert.rejects(loadPackage(() => import("a-package-that-is-not-installed" as string), "a missing package"), /^Error: a missing package could not be loaded \(Cannot find (package|module) 'a-package-that-is-not-installed'/);
  });
});
