/**
 * Prometheus metrics: one registry per coordinator (default process metrics plus ours), passed to
 * the HTTP app and to the fleet registry, which adds its own gauges. Served at /metrics, no auth.
 */
import type { NextFunction, Request, Response } from "express";
import { collectDefaultMetrics, Counter, Histogram, Registry } from "prom-client";
import { findRouteScope } from "./auth/route-scopes.js";

export function createMetricsRegistry(options: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  return registry;
}

function counter(registry: Registry): Counter<"method" | "route" | "status"> {
  const existing = registry.getSingleMetric("assay_http_requests_total");
  if (existing) return existing as Counter<"method" | "route" | "status">;
  return new Counter({ name: "assay_http_requests_total", help: "HTTP requests by method, route template and status", labelNames: ["method", "route", "status"], registers: [registry] });
}

function histogram(registry: Registry): Histogram<"method" | "route" | "status"> {
  const existing = registry.getSingleMetric("assay_http_request_duration_seconds");
  if (existing) return existing as Histogram<"method" | "route" | "status">;
  return new Histogram({
    name: "assay_http_request_duration_seconds",
    help: "HTTP request duration by method, route template and status (SSE streams: until the stream closes)",
    labelNames: ["method", "route", "status"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
}

/** The route label of a request no route matched: one fixed value, whatever the path. */
export const UNMATCHED_ROUTE = "unmatched";

/**
 * Route label: the template of the route table row (coordinator/auth/route-scopes.ts) the request
 * matches, one of `fixedPaths` (the app's few paths outside that table, e.g. /metrics and each docs
 * page), or UNMATCHED_ROUTE. Never the raw path, so the number of series stays bounded whatever
 * paths arrive.
 */
function routeLabel(req: Request, fixedPaths: ReadonlySet<string>): string {
  const queryAt = req.originalUrl.indexOf("?");
  const path = queryAt === -1 ? req.originalUrl : req.originalUrl.slice(0, queryAt);
  const route = findRouteScope(req.method, path);
  if (route) return route.path;
  return fixedPaths.has(path) ? path : UNMATCHED_ROUTE;
}

/** Express middleware counting and timing every request once its response finishes. */
export function httpMetrics(registry: Registry, fixedPaths: readonly string[] = ["/metrics"]) {
  const fixed = new Set(fixedPaths);
  const requests = counter(registry);
  const duration = histogram(registry);
  return (req: Request, res: Response, next: NextFunction): void => {
    // What histogram.startTimer() measures (process.hrtime to the answer's close), without its closure, arrays and label copy.
    const started = process.hrtime.bigint();
    res.on("close", () => {
      const labels = { method: req.method, route: routeLabel(req, fixed), status: String(res.statusCode) };
      requests.inc(labels);
      duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
}
