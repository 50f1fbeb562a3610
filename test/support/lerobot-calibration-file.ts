/** Test fixtures for LeRobot SO-101 calibrations. */

/** A calibration as lerobot-calibrate writes it (values of a real SO-101 follower's file shape). */
export const LEROBOT_FILE = {
  shoulder_pan: { id: 1, drive_mode: 0, homing_offset: -1470, range_min: 758, range_max: 3292 },
  shoulder_lift: { id: 2, drive_mode: 0, homing_offset: 153, range_min: 1000, range_max: 3000 },
  elbow_flex: { id: 3, drive_mode: 0, homing_offset: 1351, range_min: 1000, range_max: 3001 },
  wrist_flex: { id: 4, drive_mode: 0, homing_offset: -1000, range_min: 850, range_max: 3190 },
  wrist_roll: { id: 5, drive_mode: 0, homing_offset: 2, range_min: 0, range_max: 4095 },
  gripper: { id: 6, drive_mode: 0, homing_offset: 1400, range_min: 2000, range_max: 3400 },
};
