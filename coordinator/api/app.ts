/**
 * The coordinator's HTTP app: /v1 (bearer auth, scope table), /artifacts (auth), /docs and
 * /metrics (no auth), and the one error handler that shapes every non-2xx body.
 */
import express from "express";
import { authenticate, authorize } from "../auth/authenticate.js";
import { AssayError } from "../errors/assay-error.js";
import { httpMetrics } from "../metrics.js";
import { compileApiDeps, type ApiDeps } from "./api-deps.js";
import { docsRouter } from "./docs-page.js";
import { errorHandler } from "./error-handler.js";
import { artifactsRouter } from "./routes/artifacts.js";
import { catalogRouter } from "./routes/catalog.js";
import { episodesRouter } from "./routes/episodes.js";
import { eventsRouter } from "./routes/events.js";
import { keysRouter } from "./routes/keys.js";
import { runsRouter } from "./routes/runs.js";

/** Builds the app; call `.listen()` on the result. Throws on a missing or unknown option. */
export function createApiApp(raw: ApiDeps): express.Express {
  const deps = compileApiDeps(raw);
  const app = express();
  app.disable("x-powered-by");
  app.set("query parser", "simple");
  app.use(httpMetrics(deps.metrics));

  app.get("/metrics", async (_req, res) => {
    res.type(deps.metrics.contentType).send(await deps.metrics.metrics());
  });
  app.use("/docs", docsRouter(deps.docsDir));

  const v1 = express.Router();
  v1.use(authenticate(deps.db), authorize());
  v1.use(express.json({ limit: "1mb" }));
  v1.use(catalogRouter(deps), runsRouter(deps), episodesRouter(deps), eventsRouter(deps), keysRouter(deps));
  app.use("/v1", v1);

  const artifacts = express.Router();
  artifacts.use(authenticate(deps.db), authorize(), artifactsRouter(deps));
  app.use("/artifacts", artifacts);

  app.use((req) => {
    throw new AssayError("not_found", `no such endpoint: ${req.method} ${req.path}`);
  });
  app.use(errorHandler(deps.urls.docsUrl, deps.log));
  return app;
}
