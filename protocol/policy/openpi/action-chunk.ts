/**
 * An openpi reply's `actions` as rows of joint targets: a [horizon, dim] array of finite numbers
 * with horizon >= 1 and dim the robot's degrees of freedom (`policy.action_space.dim`). Accepted as
 * a numpy array (the openpi wire) or as nested MessagePack arrays (a hand-written server).
 */
import { NdArray } from "./msgpack-numpy.js";

/** "[10, 7]", or what the value is when it has no shape. */
function shapeOf(actions: NdArray | unknown[]): number[] | undefined {
  if (actions instanceof NdArray) return [...actions.shape];
  if (actions.every((row) => Array.isArray(row))) {
    const widths = new Set((actions as unknown[][]).map((row) => row.length));
    if (widths.size <= 1) return [actions.length, ...(actions.length ? [(actions[0] as unknown[]).length] : [0])];
    return undefined;
  }
  return [actions.length];
}

/**
 * The chunk's rows, each `dof` long. Throws an Error that says what arrived and what was expected:
 * "the endpoint answered actions of shape [10, 7]; policy.action_space.dim is 6".
 */
export function actionRowsOf(actions: NdArray | unknown[], dof: number): number[][] {
  const shape = shapeOf(actions);
  if (!shape) throw new Error(`the endpoint answered actions whose rows have different lengths; they must be [horizon, ${dof}]`);
  const shown = `[${shape.join(", ")}]`;
  if (shape.length !== 2) throw new Error(`the endpoint answered actions of shape ${shown}; they must be [horizon, ${dof}] (a chunk of rows, even of one)`);
  if (shape[0] < 1) throw new Error(`the endpoint answered actions of shape ${shown}: no rows; the horizon must be at least 1`);
  if (shape[1] !== dof) throw new Error(`the endpoint answered actions of shape ${shown}; policy.action_space.dim is ${dof}`);
  let flat: unknown[];
  if (actions instanceof NdArray) {
    if (!actions.isNumeric) throw new Error(`the endpoint answered actions of dtype ${actions.dtype}; they must be numbers`);
    flat = actions.toNumbers();
  } else {
    flat = (actions as unknown[][]).flat();
  }
  const bad = flat.findIndex((v) => typeof v !== "number" || !Number.isFinite(v));
  if (bad >= 0) {
    const value = flat[bad];
    const shownValue = typeof value === "number" ? String(value) : JSON.stringify(value) ?? String(value);
    throw new Error(`the endpoint answered actions with ${shownValue} at row ${Math.floor(bad / dof)}, column ${bad % dof}; every target must be a finite number`);
  }
  const rows: number[][] = [];
  for (let r = 0; r < shape[0]; r++) rows.push((flat as number[]).slice(r * dof, (r + 1) * dof));
  return rows;
}
