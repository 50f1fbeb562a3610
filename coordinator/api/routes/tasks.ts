/**
 * /v1/tasks: Task Specs through draft -> piloting -> frozen, and the next revision of a frozen one.
 * The lifecycle itself is coordinator/tasks/ (task-lifecycle.ts, task-state.ts).
 */
import { boundedJson } from "../../json/bounded-json.js";
import { checkPolicyModels, preparationContextOf, preparePolicies } from "../../models/policy-preparation.js";
import { preflightJudge } from "../../runs/judge-checks.js";
import { cameraNames, findEnvironment } from "../../catalog/environments.js";
import { runStreamUrl, STREAM_SCOPE } from "../../auth/stream-tokens.js";
import { Router, type Request } from "express";
import { authOf } from "../../auth/authenticate.js";
import { randomBase62 } from "../../auth/api-keys.js";
import { AssayError } from "../../errors/assay-error.js";
import { listReadableTasks } from "../../store/tasks-repo.js";
import {
  amendTask, createTask, freezeTask, pilotTask, requireOwnTask, requireReadableTask, reviseTask, type TaskContext,
} from "../../tasks/task-lifecycle.js";
import { taskView } from "../../tasks/task-view.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { LIST_LIMIT_DEFAULT } from "../schemas/common.js";
import { TaskListQuery } from "../schemas/tasks.js";
import { parseQuery } from "../validate-request.js";

/** Rejects a body on an operation that takes none (an empty object is accepted). */
export function requireNoBody(req: Request, what: string): void {
  const body: unknown = req.body;
  if (body === undefined || body === null) return;
  if (typeof body !== "object" || Array.isArray(body) || Object.keys(body).length > 0) {
    throw new AssayError("contract_validation_failed", `${what} takes no request body; got ${boundedJson(body, 80)}`);
  }
}

export function tasksRouter(deps: CompiledApiDeps, router: Router = Router()): Router {
  const context = (accountId: string): TaskContext => ({ db: deps.db, accountId, environments: deps.environments, now: deps.clock() });

  router.post("/tasks", async (req, res) => {
    const { accountId } = authOf(res);
    res.status(201).json(await taskView(deps.db, await createTask(req.body, context(accountId)), accountId));
  });

  router.get("/tasks", async (req, res) => {
    const { accountId } = authOf(res);
    const query = parseQuery(TaskListQuery, req);
    const limit = query.limit ?? LIST_LIMIT_DEFAULT;
    const startingAfter = query.starting_after;
    if (startingAfter !== undefined) await requireReadableTask(deps.db, accountId, startingAfter);
    const rows = await listReadableTasks(deps.db, { accountId, limit: limit + 1, before: startingAfter });
    res.json({ object: "list", url: "/v1/tasks", has_more: rows.length > limit, data: await Promise.all(rows.slice(0, limit).map((row) => taskView(deps.db, row, accountId))) });
  });

  router.get("/tasks/:taskId", async (req, res) => {
    const { accountId } = authOf(res);
    res.json(await taskView(deps.db, await requireReadableTask(deps.db, accountId, req.params.taskId), accountId));
  });

  router.post("/tasks/:taskId/pilot", async (req, res) => {
    const { accountId, keyId, scope } = authOf(res);
    const row = await requireOwnTask(deps.db, accountId, req.params.taskId);
    const runId = `run_${randomBase62(20)}`;
    const preparation = preparationContextOf(deps, accountId);
    const pilot = await pilotTask(row, req.body, context(accountId), {
      pins: deps.pins,
      runId,
      // A pilot's own policy gets the checks of any run's: its checkpoint model, its endpoint's pre-flight.
      preparePolicy: async ({ run }) => {
        const unit = {
          key: "pilot", robot: run.resolvedPins.robot, model: run.plan.model, firmware: run.plan.firmware, environment: run.plan.environment,
          task: run.resolvedPins.task, policy: (run.request as { policy: Record<string, unknown> }).policy,
        };
        await checkPolicyModels([unit], preparation);
        const models = await preparePolicies([unit], preparation);
        const judge = (run.request as { judge?: unknown }).judge;
        if (judge !== undefined && preparation.preflight !== "off") {
          const env = findEnvironment(deps.environments, run.plan.environment);
          await preflightJudge(judge, { task: run.resolvedPins.task, cameras: env ? cameraNames(env) : [], maxTimeoutMs: preparation.preflight.timeoutMs });
        }
        return models;
      },
    });
    deps.scheduler.kick();
    res.json({ run_id: runId, robot: pilot.robot, episodes: pilot.episodes, stream_url: scope.includes(STREAM_SCOPE) ? await runStreamUrl(deps.db, deps.urls.streamsUrl, runId, accountId, keyId, deps.clock()) : null });
  });

  router.post("/tasks/:taskId/amend", async (req, res) => {
    const { accountId } = authOf(res);
    const row = await requireOwnTask(deps.db, accountId, req.params.taskId);
    res.json(await taskView(deps.db, await amendTask(row, req.body ?? {}, context(accountId)), accountId));
  });

  router.post("/tasks/:taskId/freeze", async (req, res) => {
    const { accountId } = authOf(res);
    const row = await requireOwnTask(deps.db, accountId, req.params.taskId);
    requireNoBody(req, "POST /v1/tasks/{task_id}/freeze");
    res.json(await taskView(deps.db, await freezeTask(row, context(accountId)), accountId));
  });

  router.post("/tasks/:taskId/revise", async (req, res) => {
    const { accountId } = authOf(res);
    const row = await requireOwnTask(deps.db, accountId, req.params.taskId);
    requireNoBody(req, "POST /v1/tasks/{task_id}/revise");
    res.status(201).json(await taskView(deps.db, await reviseTask(row, context(accountId)), accountId));
  });

  return router;
}
