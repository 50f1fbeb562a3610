/**
 * The Python client (clients/python, issue 28 item 5) against a real coordinator with one simulated
 * cell: its unittest files run with the machine's python3, the package imported from its source
 * folder (no install step), the base URL and key in the environment. The anonymous rate limit is
 * tight (1/s, burst 2) so the tests can provoke a 429 and check that the client honours Retry-After.
 * The only test that needs Python.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startTestService, TEST_ADMIN_KEY, TEST_RATE_LIMITS, type TestService } from "./helpers.js";

const CLIENT_DIR = fileURLToPath(new URL("../../clients/python/", import.meta.url));

function runPython(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("python3", args, { cwd: CLIENT_DIR, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

describe("Python client against a real coordinator (python3, standard library only)", function () {
  this.timeout(600_000);
  let service: TestService;
  before(async () => {
    service = await startTestService({ cells: ["so101-b"], rateLimits: { ...TEST_RATE_LIMITS, anonymous: { perS: 1, burst: 2 } } });
  });
  after(async () => {
    await service?.stop();
  });

  it("passes the client's unittest suite: errors, Retry-After, submit, watch, episodes, downloads, report, export, compare, the quick start", async () => {
    const { code, output } = await runPython(["-m", "unittest", "discover", "-s", "tests", "-v"], {
      ASSAY_BASE_URL: service.coordinator.baseUrl,
      ASSAY_API_KEY: TEST_ADMIN_KEY,
      PYTHONPATH: `${CLIENT_DIR}src`,
      PYTHONDONTWRITEBYTECODE: "1",
    });
    assert.equal(code, 0, output.slice(-6000));
    assert.match(output, /Ran \d+ tests/);
    assert.match(output, /\nOK\n?$/);
  });
});
