/**
 * Evaluates an expression on one frame, in three-valued logic: a signal the frame lacks (an object
 * not tracked, no gripper reading) is unknown, and so is anything computed from it. A predicate
 * counts as met only when its condition is definitely true, so missing data never satisfies one,
 * not even under `not`.
 */
import type { BooleanExpr, NumericExpr } from "./ast.js";
import type { SignalFrame } from "./signal-frame.js";

/** Values of `initial(...)` sub-expressions, captured by the monitor. */
export type InitialValues = ReadonlyMap<NumericExpr, number>;

/** The number `expr` has in `frame`, or undefined when it cannot be computed (missing data, division by zero). */
export function evaluateNumber(expr: NumericExpr, frame: SignalFrame, initial: InitialValues): number | undefined {
  const value = numberOrUnknown(expr, frame, initial);
  return value !== undefined && Number.isFinite(value) ? value : undefined;
}

/** true, false, or undefined when the frame lacks the data to decide. */
export function evaluateCondition(expr: BooleanExpr, frame: SignalFrame, initial: InitialValues): boolean | undefined {
  switch (expr.kind) {
    case "boolean":
      return expr.value;
    case "gripper_holding":
      return frame.gripper?.holding;
    case "operator_success":
      // A person's label arrives after the episode: during it the predicate is never decided.
      return undefined;
    case "event":
      return frame.events.includes(expr.event);
    case "compare": {
      const left = evaluateNumber(expr.left, frame, initial);
      const right = evaluateNumber(expr.right, frame, initial);
      if (left === undefined || right === undefined) return undefined;
      return compare(expr.op, left, right);
    }
    case "not": {
      const operand = evaluateCondition(expr.operand, frame, initial);
      return operand === undefined ? undefined : !operand;
    }
    case "and": {
      const left = evaluateCondition(expr.left, frame, initial);
      if (left === false) return false;
      const right = evaluateCondition(expr.right, frame, initial);
      if (right === false) return false;
      return left === true && right === true ? true : undefined;
    }
    case "or": {
      const left = evaluateCondition(expr.left, frame, initial);
      if (left === true) return true;
      const right = evaluateCondition(expr.right, frame, initial);
      if (right === true) return true;
      return left === false && right === false ? false : undefined;
    }
  }
}

function compare(op: Extract<BooleanExpr, { kind: "compare" }>["op"], left: number, right: number): boolean {
  switch (op) {
    case "<":
      return left < right;
    case "<=":
      return left <= right;
    case ">":
      return left > right;
    case ">=":
      return left >= right;
    case "==":
      return left === right;
    case "!=":
      return left !== right;
  }
}

function numberOrUnknown(expr: NumericExpr, frame: SignalFrame, initial: InitialValues): number | undefined {
  switch (expr.kind) {
    case "number":
      return expr.value;
    case "time":
      return frame.tS;
    case "pose":
      return poseOf(frame, expr.object)?.[expr.axis];
    case "distance": {
      const a = poseOf(frame, expr.a);
      const b = poseOf(frame, expr.b);
      if (a === undefined || b === undefined) return undefined;
      return Math.hypot(a.x - b.x, a.y - b.y, a.z - b.z);
    }
    case "gripper_opening":
      return frame.gripper?.opening;
    case "ft_force":
      return frame.ft === undefined ? undefined : Math.hypot(...frame.ft.forceN);
    case "ft_force_z":
      return frame.ft?.forceN[2];
    case "ft_torque":
      return frame.ft === undefined ? undefined : Math.hypot(...frame.ft.torqueNm);
    case "joint":
      return frame.joints !== undefined && Object.hasOwn(frame.joints, expr.joint) ? frame.joints[expr.joint] : undefined;
    case "initial":
      return initial.get(expr);
    case "negate": {
      const operand = evaluateNumber(expr.operand, frame, initial);
      return operand === undefined ? undefined : -operand;
    }
    case "arithmetic": {
      const left = evaluateNumber(expr.left, frame, initial);
      const right = evaluateNumber(expr.right, frame, initial);
      if (left === undefined || right === undefined) return undefined;
      switch (expr.op) {
        case "+":
          return left + right;
        case "-":
          return left - right;
        case "*":
          return left * right;
        case "/":
          return left / right;
      }
    }
  }
}

function poseOf(frame: SignalFrame, object: string): SignalFrame["poses"][string] | undefined {
  return Object.hasOwn(frame.poses, object) ? frame.poses[object] : undefined;
}
