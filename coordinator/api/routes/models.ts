/**
 * Policy models (docs/api.md, "Models"):
 * - POST /v1/models (runs:write): declare an upload {name, revision?, format, bytes, sha256, retention?}; 201.
 * - PUT /v1/models/{model_id}/content (runs:write): the bytes, whole or as Content-Range chunks.
 * - GET /v1/models, GET /v1/models/{model_id} (runs:read): list (newest first) and read; an
 *   interrupted upload reads `received_bytes` here to resume.
 * - DELETE /v1/models/{model_id} (runs:write): delete the bytes; refused while an unfinished run uses it.
 */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { AssayError } from "../../errors/assay-error.js";
import { deleteModel } from "../../models/model-retention.js";
import { DEFAULT_REVISION } from "../../runs/model-ref.js";
import { createModelUpload, receiveModelChunk } from "../../models/model-uploads.js";
import { modelView } from "../../models/model-view.js";
import type { Db } from "../../store/database.js";
import { getModel, listModels, type ModelRow } from "../../store/models-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { LIST_LIMIT_DEFAULT } from "../schemas/common.js";
import { CreateModelRequest, ModelListQuery } from "../schemas/models.js";
import { parseBody, parseQuery } from "../validate-request.js";

export async function requireModel(db: Db, accountId: string, modelId: string): Promise<ModelRow> {
  const row = await getModel(db, modelId);
  if (!row || row.account_id !== accountId) throw new AssayError("not_found", `no model ${JSON.stringify(modelId)} on this account`);
  return row;
}

export function modelsRouter(deps: CompiledApiDeps, router: Router = Router()): Router {
  const view = (row: ModelRow) => modelView(row, deps.urls.baseUrl);

  router.post("/models", async (req, res) => {
    const body = parseBody(CreateModelRequest, req.body);
    const row = await createModelUpload(deps.db, authOf(res).accountId, { ...body, revision: body.revision ?? DEFAULT_REVISION }, deps.models, deps.clock());
    res.status(201).location(`${deps.urls.baseUrl}/v1/models/${row.id}`).json(view(row));
  });

  router.put("/models/:modelId/content", async (req, res) => {
    const row = await requireModel(deps.db, authOf(res).accountId, req.params.modelId);
    const type = req.get("content-type");
    if (type !== undefined && !/^application\/octet-stream\b/i.test(type)) {
      throw new AssayError("contract_validation_failed", `send the model's bytes as Content-Type: application/octet-stream; got ${JSON.stringify(type)}`);
    }
    const updated = await receiveModelChunk(deps.db, deps.objects, row, req.get("content-range"), req, deps.models, deps.clock);
    res.json(view(updated));
  });

  router.get("/models", async (req, res) => {
    const { accountId } = authOf(res);
    const query = parseQuery(ModelListQuery, req);
    const limit = query.limit ?? LIST_LIMIT_DEFAULT;
    if (query.starting_after !== undefined) await requireModel(deps.db, accountId, query.starting_after);
    const rows = await listModels(deps.db, { accountId, name: query.name, limit: limit + 1, before: query.starting_after });
    res.json({ object: "list", url: "/v1/models", has_more: rows.length > limit, data: rows.slice(0, limit).map(view) });
  });

  router.get("/models/:modelId", async (req, res) => {
    res.json(view(await requireModel(deps.db, authOf(res).accountId, req.params.modelId)));
  });

  router.delete("/models/:modelId", async (req, res) => {
    const row = await requireModel(deps.db, authOf(res).accountId, req.params.modelId);
    res.json(view(await deleteModel(deps.db, deps.objects, row, deps.clock())));
  });

  return router;
}
