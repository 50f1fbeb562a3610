/**
 * The OpenAPI 3.1 document of /v1, generated from the route table (operations.ts), the zod schemas
 * (schemas/) and the scope table (coordinator/auth/route-scopes.ts). Never edited by hand: change a
 * schema or a table row and the document follows. Served at GET /v1/openapi.json.
 */
import { Router, type NextFunction, type Request, type Response } from "express";
import { z } from "zod";
import { ANY_KEY_ROUTES, findRouteScope, PUBLIC_ROUTES, ROUTE_SCOPES, type RouteScope } from "../auth/route-scopes.js";
import { ERROR_CODES, type ErrorCode } from "../errors/codes.js";
import { resolveBearer } from "../auth/authenticate.js";
import type { CompiledApiDeps } from "./api-deps.js";
import { clientAddress } from "./client-address.js";
import { errorCodesOf, OPERATIONS, type Operation } from "./operations.js";
import { anonymousRateLimit } from "./rate-limit.js";
import { noStore } from "../http/security-headers.js";
import { SERVICE_UNAVAILABLE_CODE } from "./error-handler.js";
import { componentRegistry, COMPONENTS, ErrorEnvelope } from "./schemas/common.js";

/** The interface version the document describes (spec section 9). */
export const API_VERSION = "0.5.0";
const COMPONENT_PREFIX = "#/components/schemas/";
const INLINE_PREFIX = "__inline_";

type JsonSchema = Record<string, unknown>;
export type OpenApiDocument = Record<string, unknown> & {
  paths: Record<string, Record<string, JsonSchema>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, JsonSchema> };
};

/** `/v1/runs/{run_id}` and `/v1/runs/:runId` both become `/v1/runs/{}`. */
export function pathShape(path: string): string {
  return path.replace(/\{[^}]+\}|:\w+/g, "{}");
}

/** The scope-table row of an operation; throws when the scope table has none (a route without a scope). */
export function scopeRowOf(op: Pick<Operation, "method" | "path">): RouteScope {
  const row = findRouteScope(op.method, op.path.replace(/\{([^}]+)\}/g, "$1"));
  if (!row || pathShape(row.path) !== pathShape(op.path)) {
    throw new Error(`${op.method} ${op.path} has no row in coordinator/auth/route-scopes.ts; add one (a /v1 route without a scope answers 404)`);
  }
  return row;
}

/** Every /v1 row of the scope tables, for the check that both tables list the same routes. */
export function v1ScopeRows(): RouteScope[] {
  return [...ROUTE_SCOPES, ...ANY_KEY_ROUTES, ...PUBLIC_ROUTES].filter((row) => row.path.startsWith("/v1/"));
}

/** Drops `$schema`/`$id` that zod puts on each root: inside an OpenAPI document they would re-base `$ref`s. */
function clean(schema: JsonSchema): JsonSchema {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

/** Converts every component and every inline schema of the operations in one pass, so `$ref`s agree. */
function convertSchemas(inline: z.ZodType[]): { components: Record<string, JsonSchema>; inline: JsonSchema[] } {
  const all = z.registry<{ id: string }>();
  for (const [id, schema] of COMPONENTS) all.add(schema, { id });
  const ids = inline.map((schema, i) => {
    const existing = componentRegistry.get(schema)?.id;
    if (existing) return existing;
    const id = `${INLINE_PREFIX}${i}`;
    if (!all.has(schema)) all.add(schema, { id });
    return all.get(schema)!.id;
  });
  const { schemas } = z.toJSONSchema(all, { target: "draft-2020-12", io: "input", unrepresentable: "any", uri: (id) => `${COMPONENT_PREFIX}${id}` }) as { schemas: Record<string, JsonSchema> };
  if (schemas.__shared) throw new Error("a schema was extracted to __shared; give it a component id in coordinator/api/schemas/");
  const components: Record<string, JsonSchema> = {};
  for (const [id, schema] of Object.entries(schemas)) if (!id.startsWith(INLINE_PREFIX)) components[id] = clean(schema);
  return {
    components: Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
    inline: ids.map((id) => (id.startsWith(INLINE_PREFIX) ? clean(schemas[id]!) : { $ref: `${COMPONENT_PREFIX}${id}` })),
  };
}

/** Whether a query field may be omitted. */
function isOptional(field: z.ZodType): boolean {
  return field.safeParse(undefined).success;
}

function errorResponses(op: Operation): Record<string, JsonSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesOf(op)) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, JsonSchema> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[String(status)] = {
      description: `error envelope; error.code: ${codes.join(", ")}`,
      ...(status === 429 ? { headers: { "Retry-After": { description: "seconds to wait", schema: { type: "integer" } } } } : {}),
      content: { "application/json": { schema: { $ref: `${COMPONENT_PREFIX}Error` } } },
    };
  }
  for (const o of op.statusOverrides ?? []) {
    out[String(o.status)] = {
      description: `error envelope; error.code: ${o.code} (${o.when})`,
      content: { "application/json": { schema: { $ref: `${COMPONENT_PREFIX}Error` } } },
    };
  }
  // Any operation may find the service out of storage (docs/errors.md, service_unavailable).
  out["503"] = {
    description: `error envelope; error.code: ${SERVICE_UNAVAILABLE_CODE} (the service is out of storage)`,
    headers: { "Retry-After": { description: "seconds to wait", schema: { type: "integer" } } },
    content: { "application/json": { schema: { $ref: `${COMPONENT_PREFIX}Error` } } },
  };
  return out;
}

/** Builds the document (uncached; use `openApiDocument`). */
export function buildOpenApiDocument(baseUrl = ""): OpenApiDocument {
  // Collect every schema an operation uses, converted together with the components.
  const inline: z.ZodType[] = [];
  const slot = (schema: z.ZodType): number => inline.push(schema) - 1;
  const plans = OPERATIONS.map((op) => ({
    op,
    query: op.query ? Object.entries(op.query.shape as Record<string, z.ZodType>).map(([name, field]) => ({ name, field, slot: slot(field) })) : [],
    body: op.body ? slot(op.body) : undefined,
    responses: op.responses.map((r) => ({ r, slot: r.schema ? slot(r.schema) : undefined })),
  }));
  slot(ErrorEnvelope);
  const converted = convertSchemas(inline);

  const paths: OpenApiDocument["paths"] = {};
  for (const { op, query, body, responses } of plans) {
    const row = scopeRowOf(op);
    const parameters = [
      ...[...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } })),
      ...query.map(({ name, field, slot: i }) => {
        const { description, "x-assay-query-style": style, ...schema } = converted.inline[i]!;
        // An object parameter sent as name[key]=value (the runs list's metadata filter).
        const deep = style === "deepObject" ? { style: "deepObject", explode: true } : {};
        return { name, in: "query", required: !isOptional(field), ...(description ? { description } : {}), ...deep, schema };
      }),
    ];
    const content = (r: (typeof responses)[number]) => ({
      ...(r.slot !== undefined ? { "application/json": { schema: converted.inline[r.slot] } } : {}),
      ...Object.fromEntries(Object.entries(r.r.other ?? {}).map(([type, description]) => [type, { schema: type === "application/json" ? { type: "object" } : { type: "string", description } }])),
    });
    paths[op.path] ??= {};
    paths[op.path]![op.method.toLowerCase()] = {
      operationId: op.operationId,
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      tags: [op.tag],
      security: row.public ? [] : row.anyKey ? [{ bearerAuth: [] }] : row.scopes.map((scope) => ({ bearerAuth: [scope] })),
      "x-assay-scope": row.public ? "none (public)" : row.anyKey ? "any valid key" : row.scopes,
      "x-assay-error-codes": [...errorCodesOf(op), SERVICE_UNAVAILABLE_CODE],
      // Codes this operation answers with a status other than the code table's (docs/errors.md).
      ...(op.statusOverrides ? { "x-assay-status-overrides": Object.fromEntries(op.statusOverrides.map((o) => [String(o.status), o.code])) } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(body !== undefined ? { requestBody: { required: !op.bodyOptional, content: { "application/json": { schema: converted.inline[body] } } } } : {}),
      ...(op.rawBody ? { requestBody: { required: true, content: { [op.rawBody.type]: { schema: { type: "string", format: "binary", description: op.rawBody.description } } } } } : {}),
      responses: {
        ...Object.fromEntries(responses.map((r) => [String(r.r.status), { description: r.r.description, content: content(r) }])),
        ...errorResponses(op),
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Assay API",
      version: API_VERSION,
      description: "Physical robot evaluation service. Generated from the coordinator's schemas (coordinator/api/schemas/) and route tables; never edited by hand. "
        + "Every /v1 path needs `Authorization: Bearer <API key>`; an operation's `security` lists the scopes that admit it (any one suffices). "
        + "Every non-2xx response is the error envelope (components/schemas/Error).",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    ...(baseUrl ? { servers: [{ url: baseUrl }] } : {}),
    security: [{ bearerAuth: [] }],
    tags: [...new Set(OPERATIONS.map((op) => op.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: converted.components,
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "an API key, asy_live_...; scopes: runs:read, runs:write, streams:read, data:purge, keys:admin, calibration:export" },
      },
    },
  };
}

const cache = new Map<string, OpenApiDocument>();

/** The document for `baseUrl`, built once per base URL. */
export function openApiDocument(baseUrl = ""): OpenApiDocument {
  let doc = cache.get(baseUrl);
  if (!doc) {
    doc = buildOpenApiDocument(baseUrl);
    cache.set(baseUrl, doc);
  }
  return doc;
}

/**
 * GET /v1/openapi.json: public, so the docs site's API reference and any tool can read it without a
 * key (it describes the API, no account's data); rate-limited per client address like the other
 * public routes. A key that is sent must still be valid (401 otherwise), as everywhere else. Mounted
 * at that path itself (app.ts), so that no other /v1 request enters this router: a request that
 * enters a router and matches nothing in it leaves through a setImmediate (router 2.x), one turn of
 * the event loop for every /v1 request when it was mounted at /v1 (issue 29).
 */
export function openApiRouter(deps: CompiledApiDeps): Router {
  const router = Router();
  const limits = anonymousRateLimit(deps.rateLimits, (req) => clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], deps.trustedProxies));
  const keyIfSent = async (req: Request, _res: Response, next: NextFunction) => {
    const header = req.get("authorization");
    if (header) await resolveBearer(deps.db, header);
    next();
  };
  router.get("/", limits.reads, keyIfSent, noStore, (_req, res) => {
    res.json(openApiDocument(deps.urls.baseUrl));
  });
  return router;
}
