/**
 * The instruments a cell declares in its Hello (and names in a heartbeat's `instruments_down`): joint states, each
 * camera with its rate and size, the gripper, the wrist F/T sensor, motion capture, the operator station when the
 * cell offers one, and the e-stop. The coordinator gives a cell only the episodes its instruments can score.
 */
import type { Instrument } from "../protocol/gen/cell.js";
import type { CellHardware } from "./hardware/types.js";

/** One instrument; rate and size are 0 where they do not apply (or are not known yet). */
export function instrument(kind: string, name = "", rateHz = 0, size = { width: 0, height: 0 }): Instrument {
  return { kind, name, rateHz, ...size };
}

/** Every instrument of `hardware`, plus `operator` when a person labels at this cell. */
export function cellInstruments(hardware: CellHardware, withOperator: boolean): Instrument[] {
  return [
    instrument("joint_states"),
    // A camera's size is known from its calibration; 0 x 0 until its first frame otherwise.
    ...hardware.cameras.map((c) => instrument("camera", c.name, c.rateHz, c.calibration && { width: c.calibration.width, height: c.calibration.height })),
    ...(hardware.gripper ? [instrument("gripper_state")] : []),
    ...(hardware.wristFt ? [instrument("ft_wrist")] : []),
    ...(hardware.mocap ? [instrument("mocap")] : []),
    ...(withOperator ? [instrument("operator")] : []),
    instrument("estop"),
  ];
}
