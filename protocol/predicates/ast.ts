import { formatName } from "./lexer.js";

/**
 * The syntax tree of a predicate. Expressions are typed at parse time: a `NumericExpr` evaluates to
 * a number in SI units (metres, seconds, radians, newtons), a `BooleanExpr` to true or false. Every
 * node carries its `start`/`end` character offsets in the source (end exclusive).
 */

export interface Span {
  start: number;
  end: number;
}

export type PoseAxis = "x" | "y" | "z" | "yaw";
export type ArithmeticOp = "+" | "-" | "*" | "/";
export type ComparisonOp = "<" | "<=" | ">" | ">=" | "==" | "!=";

export type NumericExpr =
  /** A literal, already converted from its unit suffix to SI. */
  | ({ kind: "number"; value: number } & Span)
  /** `pose(o).x|y|z|yaw`; `height(o)` parses to axis "z". Metres, or radians for yaw. */
  | ({ kind: "pose"; object: string; axis: PoseAxis } & Span)
  /** 3-D distance between two tracked objects, metres. */
  | ({ kind: "distance"; a: string; b: string } & Span)
  /** `gripper.opening`, 0 (closed) to 1 (open). */
  | ({ kind: "gripper_opening" } & Span)
  /** `ft.force` (|F|, N), `ft.force_z` (F_z, N), `ft.torque` (|T|, N m). */
  | ({ kind: "ft_force" | "ft_force_z" | "ft_torque" } & Span)
  /** `joint(name)`, radians. */
  | ({ kind: "joint"; joint: string } & Span)
  /** Seconds since episode start. */
  | ({ kind: "time" } & Span)
  /** The operand's value in the first frame in which it could be computed. */
  | ({ kind: "initial"; operand: NumericExpr } & Span)
  | ({ kind: "negate"; operand: NumericExpr } & Span)
  | ({ kind: "arithmetic"; op: ArithmeticOp; left: NumericExpr; right: NumericExpr } & Span);

export type BooleanExpr =
  | ({ kind: "boolean"; value: boolean } & Span)
  /** `gripper.holding`. */
  | ({ kind: "gripper_holding" } & Span)
  /** `operator.success`: a person's success label, given after the episode (never known during it). */
  | ({ kind: "operator_success" } & Span)
  /** `event(name)`: true in the frame the event occurred. */
  | ({ kind: "event"; event: string } & Span)
  | ({ kind: "compare"; op: ComparisonOp; left: NumericExpr; right: NumericExpr } & Span)
  | ({ kind: "not"; operand: BooleanExpr } & Span)
  | ({ kind: "and" | "or"; left: BooleanExpr; right: BooleanExpr } & Span);

export type Expr = NumericExpr | BooleanExpr;

/** A parsed predicate: a boolean condition plus its optional temporal suffixes. */
export interface Predicate {
  source: string;
  condition: BooleanExpr;
  /** `for <duration>`: the condition must hold continuously this long, seconds. */
  forS?: number;
  /** `within <duration>`: must be satisfied no later than this, seconds since episode start. */
  withinS?: number;
}

const NUMERIC_KINDS: ReadonlySet<string> = new Set([
  "number", "pose", "distance", "gripper_opening", "ft_force", "ft_force_z", "ft_torque", "joint", "time", "initial",
  "negate", "arithmetic",
]);

export function isNumeric(expr: Expr): expr is NumericExpr {
  return NUMERIC_KINDS.has(expr.kind);
}

/** The direct sub-expressions of `expr`. */
export function children(expr: Expr): Expr[] {
  switch (expr.kind) {
    case "initial":
    case "negate":
    case "not":
      return [expr.operand];
    case "arithmetic":
    case "compare":
    case "and":
    case "or":
      return [expr.left, expr.right];
    default:
      return [];
  }
}

/**
 * A canonical, fully parenthesized rendering with numbers in SI units, e.g.
 * `((pose(cube).z > 0.06) and gripper.holding) for 1s`. Shows how a predicate was understood.
 */
export function formatPredicate(predicate: Predicate): string {
  let text = formatExpr(predicate.condition);
  if (predicate.forS !== undefined) text += ` for ${predicate.forS}s`;
  if (predicate.withinS !== undefined) text += ` within ${predicate.withinS}s`;
  return text;
}

export function formatExpr(expr: Expr): string {
  switch (expr.kind) {
    case "number":
      return String(expr.value);
    case "boolean":
      return String(expr.value);
    case "pose":
      return `pose(${formatName(expr.object)}).${expr.axis}`;
    case "distance":
      return `distance(${formatName(expr.a)}, ${formatName(expr.b)})`;
    case "gripper_opening":
      return "gripper.opening";
    case "gripper_holding":
      return "gripper.holding";
    case "operator_success":
      return "operator.success";
    case "ft_force":
      return "ft.force";
    case "ft_force_z":
      return "ft.force_z";
    case "ft_torque":
      return "ft.torque";
    case "joint":
      return `joint(${formatName(expr.joint)})`;
    case "time":
      return "time";
    case "event":
      return `event(${formatName(expr.event)})`;
    case "initial":
      return `initial(${formatExpr(expr.operand)})`;
    case "negate":
      return `(-${formatExpr(expr.operand)})`;
    case "not":
      return `(not ${formatExpr(expr.operand)})`;
    case "arithmetic":
    case "compare":
    case "and":
    case "or": {
      const op = expr.kind === "arithmetic" || expr.kind === "compare" ? expr.op : expr.kind;
      return `(${formatExpr(expr.left)} ${op} ${formatExpr(expr.right)})`;
    }
  }
}
