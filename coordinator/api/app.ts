/**
 * The coordinator's HTTP app: /v1 (bearer auth, scope table; /v1/openapi.json and leaderboards public),
 * /artifacts (auth), /docs and /metrics (no auth), and the one error handler that shapes every non-2xx body.
 */
import express, { type Router } from "express";
import { authenticate, authorize } from "../auth/authenticate.js";
import { AssayError } from "../errors/assay-error.js";
import { httpMetrics } from "../metrics.js";
import { compileApiDeps, type ApiDeps, type CompiledApiDeps } from "./api-deps.js";
import { docsSite } from "./docs/docs-router.js";
import { errorHandler } from "./error-handler.js";
import { artifactsRouter } from "./routes/artifacts.js";
import { catalogRouter } from "./routes/catalog.js";
import { statisticsRouter } from "./routes/statistics.js";
import { comparisonsRouter } from "./routes/comparisons.js";
import { cellsRouter } from "./routes/cells.js";
import { episodesRouter } from "./routes/episodes.js";
import { episodeMediaRouter } from "./routes/episode-media.js";
import { eventsRouter } from "./routes/events.js";
import { keysRouter } from "./routes/keys.js";
import { runsRouter } from "./routes/runs.js";
import { kitsRouter } from "./routes/kits.js";
import { labelsRouter } from "./routes/labels.js";
import { signingKeysRouter } from "./routes/signing-keys.js";
import { tasksRouter } from "./routes/tasks.js";
import { noLimit, rateLimit } from "./rate-limit.js";
import { budgetsRouter } from "./routes/budgets.js";
import { dataRouter } from "./routes/data.js";
import { quoteRouter } from "./routes/quote.js";
import { runResultRouter } from "./routes/run-result.js";
import { usageRouter } from "./routes/usage.js";
import { webhooksRouter } from "./routes/webhooks.js";
import { checkpointsRouter } from "./routes/checkpoints.js";
import { gatesRouter } from "./routes/gates.js";
import { paperRouter } from "./routes/paper.js";
import { reportRouter } from "./routes/report.js";
import { suitesRouter } from "./routes/suites.js";
import { replayRouter } from "./routes/replay.js";
import { exportDownloadRouter, exportsRouter } from "./routes/exports.js";
import { mjpegRouter, streamsRouter } from "./routes/streams.js";
import { modelsRouter } from "./routes/models.js";
import { leaderboardsRouter } from "./routes/leaderboards.js";
import { accountRouter } from "./routes/account.js";
import { openApiRouter } from "./openapi.js";
import { metricsAccess } from "./metrics-access.js";
import { noStore, securityHeaders } from "../http/security-headers.js";
import { weakEtag } from "../http/weak-etag.js";
import { MAX_JSON_DEPTH } from "./json-depth.js";
import { jsonBody } from "./json-body.js";
import { rejectNulInUrl } from "./nul-characters.js";
import { consoleRouter } from "../console/console-router.js";

/** Builds the app; call `.listen()` on the result. Throws on a missing or unknown option. */
export function createApiApp(raw: ApiDeps): express.Express {
  const deps = compileApiDeps(raw);
  const app = express();
  app.disable("x-powered-by");
  app.set("query parser", "simple");
  app.set("etag", weakEtag); // express's default tag, made with one hash call (http/weak-etag.ts)
  app.use(securityHeaders);
  app.use(rejectNulInUrl());
  const docs = docsSite(deps.docsDir);
  // Route labels come from the route table; these are the only other paths with their own label.
  app.use(httpMetrics(deps.metrics, ["/metrics", ...docs.paths]));

  // Unknown or revoked keys per client address, before the store is read (the per-key buckets need a key).
  const rejectedKeys = deps.rejectedKeys ?? undefined;

  // One set of per-key buckets for /v1 and /artifacts.
  const limiter = deps.rateLimits === "off" ? noLimit : rateLimit(deps.rateLimits);
  const v1 = express.Router();
  v1.use(noStore, authenticate(deps.apiKeys, rejectedKeys), limiter, authorize());
  v1.use(jsonBody({ limit: "1mb", maxDepth: MAX_JSON_DEPTH }));
  // Every /v1 route is registered on the v1 router itself, in this order (their paths are disjoint; the most
  // requested, runs, first): router 2.x leaves a nested router that matched nothing through a setImmediate, so with a
  // router per topic a request for the last one waited for a turn of the event loop per router before it.
  const routes: Array<(deps: CompiledApiDeps, router: Router) => Router> = [
    runsRouter, catalogRouter, episodesRouter, episodeMediaRouter, eventsRouter, keysRouter,
    tasksRouter, kitsRouter, signingKeysRouter,
    quoteRouter, budgetsRouter, usageRouter, webhooksRouter, dataRouter, runResultRouter,
    reportRouter, suitesRouter, gatesRouter, checkpointsRouter,
    paperRouter,
    cellsRouter, statisticsRouter, comparisonsRouter,
    replayRouter, exportsRouter, streamsRouter, modelsRouter, accountRouter,
  ];
  for (const register of routes) register(deps, v1);
  // Published leaderboards and the API's own description: public, no key, rate-limited per client address.
  app.use("/v1/leaderboards", leaderboardsRouter(deps));
  app.use("/v1/openapi.json", openApiRouter(deps)); // not at /v1: see openApiRouter
  app.use("/v1", v1);
  // After /v1 (their paths are disjoint from it), so that the /v1 requests, the most frequent, are not matched against them first.
  app.get("/metrics", metricsAccess(deps.apiKeys, deps.metricsAccess, rejectedKeys), async (_req, res) => {
    res.type(deps.metrics.contentType).send(await deps.metrics.metrics());
  });
  app.use("/docs", docs.router);

  const artifacts = express.Router();
  artifacts.use(authenticate(deps.apiKeys, rejectedKeys), limiter, authorize());
  artifactsRouter(deps, artifacts);
  exportDownloadRouter(deps, artifacts);
  app.use("/artifacts", artifacts);
  // Live MJPEG: the signed token in the URL (or a bearer key) is the credential, so <img> can use it.
  app.use("/streams", mjpegRouter(deps));
  // Shipping labels: no bearer key; the signed query string is the credential.
  app.use("/labels", labelsRouter(deps));
  app.use(consoleRouter()); // the web console at `/`: index.html and /assets/<version>/; anything else falls through

  app.use((req) => {
    throw new AssayError("not_found", `no such endpoint: ${req.method} ${req.path}`);
  });
  app.use(errorHandler(deps.urls.docsUrl, deps.log));
  return app;
}
