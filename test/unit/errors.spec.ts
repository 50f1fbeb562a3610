import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import Database from "better-sqlite3";
import { errorHandler, fromBodyParserError, INTERNAL_ERROR_CODE, SERVICE_UNAVAILABLE_CODE } from "../../coordinator/api/error-handler.js";
import { AssayError, errorEnvelope } from "../../coordinator/errors/assay-error.js";
import { ERROR_CODES, isErrorCode } from "../../coordinator/errors/codes.js";

/** Spec section 7, transcribed: code -> [HTTP status, retryable]. */
const SPEC: Record<string, [number, boolean]> = {
  invalid_api_key: [401, false], insufficient_scope: [403, false], not_found: [404, false], publish_forbidden: [403, false],
  rate_limited: [429, true], contract_validation_failed: [422, false], firmware_pin_unavailable: [422, false],
  environment_unavailable: [422, false], task_unknown: [422, false], scenario_format_invalid: [422, false],
  episodes_invalid: [422, false], quote_expired: [409, true], budget_exceeded: [402, false], monthly_budget_exceeded: [402, false],
  queue_timeout: [408, true], policy_endpoint_timeout: [408, false], estop_triggered: [409, false], retention_expired: [410, false],
};

describe("error table and envelope", () => {
  it("holds exactly the spec's codes with their statuses", () => {
    assert.deepEqual(Object.keys(ERROR_CODES).sort(), Object.keys(SPEC).sort());
    for (const [code, [status, retryable]] of Object.entries(SPEC)) {
      assert.equal(ERROR_CODES[code as keyof typeof ERROR_CODES].status, status, code);
      assert.equal(ERROR_CODES[code as keyof typeof ERROR_CODES].retryable, retryable, code);
    }
    assert.equal(isErrorCode("episodes_invalid"), true);
    assert.equal(isErrorCode("internal_error"), false);
  });

  it("builds the envelope with run_id only when given and doc_url at the code's anchor", () => {
    const error = new AssayError("not_found", "no run \"run_x\"", { runId: "run_x" });
    assert.equal(error.status, 404);
    assert.deepEqual(errorEnvelope(error, "https://api.test/docs"), {
      error: { code: "not_found", message: "no run \"run_x\"", run_id: "run_x", doc_url: "https://api.test/docs/errors#not_found" },
    });
    const plain = errorEnvelope(new AssayError("invalid_api_key", "unknown API key"), "https://api.test/docs");
    assert.equal("run_id" in plain.error, false);
  });

  it("maps body-parser failures to contract_validation_failed and leaves other errors alone", () => {
    const parse = Object.assign(new SyntaxError("Unexpected end of JSON input"), { type: "entity.parse.failed", status: 400 });
    assert.equal(fromBodyParserError(parse)?.code, "contract_validation_failed");
    const large = Object.assign(new Error("too large"), { type: "entity.too.large", status: 413 });
    assert.match(fromBodyParserError(large)?.message ?? "", /1 MB/);
    assert.equal(fromBodyParserError(new Error("boom")), undefined);
  });

  it("documents every code, internal_error and service_unavailable, under its own anchor in docs/errors.md", () => {
    const doc = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");
    for (const code of [...Object.keys(ERROR_CODES), INTERNAL_ERROR_CODE, SERVICE_UNAVAILABLE_CODE]) {
      assert.match(doc, new RegExp(`^## ${code}$`, "m"), code);
      const section = doc.split(`## ${code}\n`)[1].split("\n## ")[0];
      if (code === SERVICE_UNAVAILABLE_CODE) assert.match(section, /HTTP status:\*\* 503/, code);
      else if (code !== INTERNAL_ERROR_CODE) assert.match(section, new RegExp(`HTTP status:\\*\\* ${ERROR_CODES[code as keyof typeof ERROR_CODES].status}`), code);
    }
  });

  it("answers storage full (SQLite, PostgreSQL, the artifact disk) 503 service_unavailable with Retry-After, never 500", () => {
    // A real SQLITE_FULL: a database not allowed to grow by a page.
    const db = new Database(":memory:");
    db.exec("CREATE TABLE t (x TEXT)");
    db.pragma(`max_page_count = ${db.pragma("page_count", { simple: true })}`);
    let sqliteFull: unknown;
    try {
      db.prepare("INSERT INTO t VALUES (?)").run("x".repeat(100_000));
    } catch (error) {
      sqliteFull = error;
    }
    db.close();
    assert.equal((sqliteFull as { code?: string }).code, "SQLITE_FULL");
    const postgresFull = Object.assign(new Error("could not extend file: No space left on device"), { code: "53100" });
    const diskFull = new Error("writing the recording failed", { cause: Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }) });
    for (const error of [sqliteFull, postgresFull, diskFull]) {
      const sent: { status?: number; body?: any; headers: Record<string, string> } = { headers: {} };
      const res = {
        headersSent: false,
        status(code: number) { sent.status = code; return this; },
        json(body: unknown) { sent.body = body; return this; },
        set(name: string, value: string) { sent.headers[name] = value; return this; },
      };
      const logged: string[] = [];
      errorHandler("https://api.test/docs", (message) => logged.push(message))(error, { method: "POST", originalUrl: "/v1/runs" } as never, res as never, () => {});
      assert.equal(sent.status, 503, String(error));
      assert.equal(sent.body.error.code, SERVICE_UNAVAILABLE_CODE);
      assert.match(sent.body.error.message, /out of storage space/);
      assert.equal(sent.body.error.doc_url, "https://api.test/docs/errors#service_unavailable");
      assert.equal(sent.headers["Retry-After"], "60");
      assert.match(logged[0]!, /storage full/, "the operator is told");
    }
  });

  it("turns an unexpected error into a 500 envelope without internals, and sets Retry-After on rate_limited", () => {
    const sent: { status?: number; body?: any; headers: Record<string, string> } = { headers: {} };
    const res = {
      headersSent: false,
      status(code: number) { sent.status = code; return this; },
      json(body: unknown) { sent.body = body; return this; },
      set(name: string, value: string) { sent.headers[name] = value; return this; },
    };
    const logged: unknown[] = [];
    const handler = errorHandler("https://api.test/docs", (_message, error) => logged.push(error));
    handler(new TypeError("cannot read properties of undefined (reading 'x') at /work/main/secret.ts:1"), { method: "GET", originalUrl: "/v1/x" } as never, res as never, () => {});
    assert.equal(sent.status, 500);
    assert.equal(sent.body.error.code, INTERNAL_ERROR_CODE);
    assert.doesNotMatch(JSON.stringify(sent.body), /secret\.ts|TypeError/);
    assert.equal(logged.length, 1);
    handler(new AssayError("rate_limited", "slow down", { retryAfterS: 2.5 }), {} as never, res as never, () => {});
    assert.equal(sent.status, 429);
    assert.equal(sent.headers["Retry-After"], "3");
  });
});
