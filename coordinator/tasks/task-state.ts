/**
 * The Task Spec lifecycle (spec section 3): draft -> piloting (pilot) -> frozen (freeze). Amend keeps
 * the status; pilot again while piloting starts a new calibration run; revise leaves a frozen task
 * frozen and starts a new draft of the same name. This is the only place that knows legal moves.
 */
import { AssayError } from "../errors/assay-error.js";

export type TaskStatus = "draft" | "piloting" | "frozen";
export const TASK_STATUSES: readonly TaskStatus[] = ["draft", "piloting", "frozen"];

export type TaskOperation = "pilot" | "amend" | "freeze" | "revise";

/** How a task is named in messages: its rev once frozen, else its name and id. */
export interface TaskLabel {
  id: string;
  name: string;
  rev: string | null;
}

const TABLE: Record<TaskStatus, Partial<Record<TaskOperation, TaskStatus>>> = {
  draft: { pilot: "piloting", amend: "draft" },
  piloting: { pilot: "piloting", amend: "piloting", freeze: "frozen" },
  frozen: { revise: "frozen" },
};

/** Whether `op` is legal in `status`. */
export function canApply(status: TaskStatus, op: TaskOperation): boolean {
  return TABLE[status][op] !== undefined;
}

/**
 * The task's status after `op`, or a 422 contract_validation_failed naming the current status and
 * the step that is allowed instead.
 */
export function nextTaskStatus(status: TaskStatus, op: TaskOperation, task: TaskLabel): TaskStatus {
  const next = TABLE[status][op];
  if (next !== undefined) return next;
  const label = task.rev ?? `${JSON.stringify(task.name)} (${task.id})`;
  const path = (verb: string) => `POST /v1/tasks/${task.id}/${verb}`;
  let message: string;
  if (status === "frozen") {
    message = `task ${label} is frozen and immutable; create the next revision with ${path("revise")}`;
  } else if (op === "freeze") {
    message = `task ${label} is a draft; pilot the task before freezing it (${path("pilot")})`;
  } else {
    message = `task ${label} is ${status}, not frozen, so there is nothing to revise; change it with ${path("amend")}`;
  }
  throw new AssayError("contract_validation_failed", message);
}
