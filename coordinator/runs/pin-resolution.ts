/**
 * Pins of a run body resolved against the catalogue and the fleet: `robot` (`<model>@<firmware>`
 * or `@latest`), `environment` (installed with that pin), and `task` (a frozen revision visible to
 * the account). Each failure carries the spec's code for what was missing.
 */
import { resolveRobotPin, type FirmwarePins, type RobotModel } from "../../firmware-pins/pins.js";
import { environmentId, findEnvironment, type CatalogEnvironment } from "../catalog/environments.js";
import {
  findNewestFrozenRevision, findVisibleFrozenRevision, findVisibleTaskById, listVisibleTasksNamed, type TaskRecord,
} from "../store/tasks-repo.js";
import { fail, q } from "./field-checks.js";
import type { ValidateRunContext } from "./run-request.js";

export function resolveRobot(pins: FirmwarePins, value: unknown): { model: RobotModel; firmware: string; pin: string } {
  if (typeof value !== "string") fail("firmware_pin_unavailable", `robot is required as "<model>@<firmware>" or "<model>@latest"; got ${q(value)}`);
  const resolution = resolveRobotPin(pins, value);
  if (!resolution.ok) fail("firmware_pin_unavailable", resolution.message);
  return resolution;
}

export function resolveEnvironment(ctx: ValidateRunContext, value: unknown, robotPin: string, firmware: string, model: RobotModel): CatalogEnvironment {
  const installedIn = [...new Set(ctx.pins.installations.filter((i) => i.model === model.id && i.firmware === firmware).map((i) => i.environment))];
  if (typeof value !== "string") {
    fail("environment_unavailable", `environment is required as "<name>@<version>" or "<name>"; got ${q(value)}; ${robotPin} is installed in: ${installedIn.join(", ")}`);
  }
  const env = findEnvironment(ctx.environments, value);
  if (!env) {
    const known = ctx.environments.map(environmentId).join(", ");
    fail("environment_unavailable", `environment ${q(value)} is not in the catalogue; known: ${known}`);
  }
  if (!installedIn.includes(environmentId(env))) {
    fail("environment_unavailable", `environment ${q(value)} (${environmentId(env)}) has no cell with ${robotPin}; ${robotPin} is installed in: ${installedIn.join(", ") || "no environment"}`);
  }
  return env;
}

/** A frozen task revision visible to the account: `<name>@v<N>`, the newest of `<name>`, or a task id. */
export async function resolveTask(ctx: ValidateRunContext, value: unknown): Promise<TaskRecord & { version: number }> {
  if (typeof value !== "string" || value.trim() === "") fail("task_unknown", `task is required as "<name>", "<name>@v<N>" or a task id; got ${q(value)}`);
  const text = value.trim();
  const revision = /^(.+)@v(\d+)$/.exec(text);
  let row: TaskRecord | undefined;
  if (revision) {
    row = await findVisibleFrozenRevision(ctx.db, ctx.accountId, revision[1], Number(revision[2]));
    if (!row) fail("task_unknown", `task ${q(text)} is not a frozen revision visible to this account; ${await describeFrozen(ctx, revision[1])}`);
  } else {
    row = await findVisibleTaskById(ctx.db, ctx.accountId, text) ?? await findNewestFrozenRevision(ctx.db, ctx.accountId, text);
    if (!row) {
      const named = await listVisibleTasksNamed(ctx.db, ctx.accountId, text);
      if (named.length) fail("task_unknown", `task ${q(text)} has no frozen revision yet (status ${named.map((t) => t.status).join(", ")}); freeze it before submitting a run`);
      fail("task_unknown", `task ${q(text)} is not known to this account; use "<name>", "<name>@v<N>" or a task id`);
    }
  }
  if (row.status !== "frozen" || row.version === null) fail("task_unknown", `task ${q(text)} is ${row.status}, not frozen; freeze it before submitting a run`);
  return row as TaskRecord & { version: number };
}

async function describeFrozen(ctx: ValidateRunContext, name: string): Promise<string> {
  const frozen = (await listVisibleTasksNamed(ctx.db, ctx.accountId, name)).filter((t) => t.status === "frozen" && t.version !== null);
  return frozen.length ? `frozen revisions: ${frozen.map((t) => `${t.name}@v${t.version}`).join(", ")}` : `no frozen revision of "${name}" exists`;
}
