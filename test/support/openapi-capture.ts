/**
 * Mocha root-hook plugin (.mocharc.json `require`): records every response a test receives from a
 * coordinator's /v1 through `fetch` (the integration helpers' `api()` and plain fetch alike), and
 * after all tests checks each against the OpenAPI document's response schemas with ajv
 * (openapi-conformance.ts). A mismatch fails the run with the list of mismatches, so the document
 * cannot drift from what the service returns. ASSAY_OPENAPI_CHECK=off turns the check off.
 *
 * Only the status, content type and JSON body are read (from a clone); streamed bodies (SSE, PDF,
 * artifacts) are never touched, so tests see exactly the responses they saw before.
 */
import { buildOpenApiDocument } from "../../coordinator/api/openapi.js";
import { OpenApiConformance, type RecordedResponse } from "./openapi-conformance.js";

const recorded: Array<Promise<RecordedResponse | undefined>> = [];
let currentTest: string | undefined;
const enabled = process.env.ASSAY_OPENAPI_CHECK !== "off";

function isLocal(url: URL): boolean {
  return url.hostname === "127.0.0.1" || url.hostname === "localhost" || url.hostname === "[::1]";
}

async function record(input: RequestInfo | URL, init: RequestInit | undefined, response: Response, test: string | undefined): Promise<RecordedResponse | undefined> {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (!isLocal(url) || !url.pathname.startsWith("/v1/")) return undefined;
  const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
  const contentType = response.headers.get("content-type");
  const entry: RecordedResponse = { method, path: url.pathname, query: url.search, status: response.status, contentType, test };
  if ((contentType ?? "").startsWith("application/json") && method !== "HEAD") {
    try {
      entry.body = await response.clone().json();
    } catch {
      entry.body = "<unreadable JSON body>";
    }
  }
  return entry;
}

if (enabled) {
  const original = globalThis.fetch;
  globalThis.fetch = async function recordingFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    const response = await original(input, init);
    recorded.push(record(input, init, response, currentTest).catch(() => undefined));
    return response;
  };
}

/** Responses recorded so far (for openapi.spec.ts). */
export async function recordedResponses(): Promise<RecordedResponse[]> {
  return (await Promise.all(recorded)).filter((r): r is RecordedResponse => r !== undefined);
}

export const mochaHooks = {
  beforeEach(this: Mocha.Context): void {
    currentTest = this.currentTest?.fullTitle();
  },
  async afterAll(this: Mocha.Context): Promise<void> {
    if (!enabled) return;
    const responses = await recordedResponses();
    if (responses.length === 0) return;
    const conformance = new OpenApiConformance(buildOpenApiDocument());
    const problems = responses.flatMap((r) => conformance.check(r));
    if (problems.length > 0) {
      const unique = [...new Set(problems)];
      throw new Error(`${unique.length} response(s) do not match the OpenAPI document (coordinator/api/schemas, operations.ts):\n  ${unique.slice(0, 40).join("\n  ")}${unique.length > 40 ? `\n  ... and ${unique.length - 40} more` : ""}`);
    }
  },
};
