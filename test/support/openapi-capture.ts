/**
 * Mocha root-hook plugin (.mocharc.cjs `require`): checks every response a test receives from a
 * coordinator's /v1 through `fetch` (the integration helpers' `api()` and plain fetch alike) against
 * the OpenAPI document's response schemas with ajv (openapi-conformance.ts), as it arrives. After all
 * tests, a mismatch fails the run with the list of mismatches, so the document cannot drift from what
 * the service returns. ASSAY_OPENAPI_CHECK=off turns the check off.
 *
 * Only the status, content type and JSON body are read (from a clone); streamed bodies (SSE, PDF,
 * artifacts) are never touched, so tests see exactly the responses they saw before. Nothing of a
 * response is kept once it is checked, only the problems found: the suite receives hundreds of
 * thousands of responses (tests poll), and holding every body until the end made the test process's
 * heap grow all run long and its garbage collector take most of its CPU.
 */
import type { OpenApiConformance, RecordedResponse } from "./openapi-conformance.js";

/** Distinct problems kept for the failure message; more are counted, not kept. */
const MAX_PROBLEMS_KEPT = 200;

const problems = new Set<string>();
let problemsDropped = 0;
let checked = 0;
/** Checks not finished yet (a body still being read); each removes itself when done. */
const inFlight = new Set<Promise<void>>();
let conformance: Promise<OpenApiConformance> | undefined;
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

function note(problem: string): void {
  if (problems.has(problem)) return;
  if (problems.size < MAX_PROBLEMS_KEPT) problems.add(problem);
  else problemsDropped++;
}

/**
 * The checker, built on the first /v1 response: a unit spec that never calls a coordinator does not
 * load the coordinator's API graph (api, schemas, kinds, zod, ajv: about 0.6 s of CPU, most of such a
 * spec's start). Mocha loads this plugin and the spec files with `import()` (.mocharc.cjs), so this
 * `import()` reuses the module instances the specs use.
 */
async function loadConformance(): Promise<OpenApiConformance> {
  const [{ buildOpenApiDocument }, { OpenApiConformance }] = await Promise.all([
    import("../../coordinator/api/openapi.js"),
    import("./openapi-conformance.js"),
  ]);
  return new OpenApiConformance(buildOpenApiDocument());
}

async function check(entry: RecordedResponse): Promise<void> {
  checked++;
  try {
    conformance ??= loadConformance();
    for (const problem of (await conformance).check(entry)) note(problem);
  } catch (error) {
    // A schema ajv cannot compile is a problem of the document, reported like a mismatch.
    note(`${entry.method} ${entry.path}${entry.query} -> ${entry.status}: the check itself failed: ${(error as Error).message}`);
  }
}

if (enabled) {
  const original = globalThis.fetch;
  globalThis.fetch = async function recordingFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    const response = await original(input, init);
    const checking: Promise<void> = record(input, init, response, currentTest)
      .catch(() => undefined)
      .then((entry) => entry && check(entry))
      .finally(() => inFlight.delete(checking));
    inFlight.add(checking);
    return response;
  };
}

/** How many responses were checked so far, and the distinct problems found (for a summary or a test). */
export async function conformanceSoFar(): Promise<{ checked: number; problems: string[]; dropped: number }> {
  await Promise.all([...inFlight]);
  return { checked, problems: [...problems], dropped: problemsDropped };
}

export const mochaHooks = {
  beforeEach(this: Mocha.Context): void {
    currentTest = this.currentTest?.fullTitle();
  },
  async afterAll(this: Mocha.Context): Promise<void> {
    if (!enabled) return;
    const { problems: found, dropped } = await conformanceSoFar();
    if (found.length > 0) {
      const shown = found.slice(0, 40);
      const more = found.length - shown.length + dropped;
      throw new Error(`${found.length + dropped} response(s) do not match the OpenAPI document (coordinator/api/schemas, operations.ts):\n  ${shown.join("\n  ")}${more > 0 ? `\n  ... and ${more} more` : ""}`);
    }
  },
};
