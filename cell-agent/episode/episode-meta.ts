/**
 * The `/meta` fields an episode's start and end share (interface: firmware, calibration age, actuator cycle
 * counts, thermal state, seed, the perturbations as realized), read from the motors when the meta is written.
 */
import type { CellHardware } from "../hardware/types.js";
import { cameraClockRecord } from "./camera-skew.js";
import type { EpisodeAssignment } from "./assignment.js";
import type { EpisodePlan } from "./plan.js";

async function optional<T>(read: (() => Promise<T>) | undefined): Promise<T | undefined> {
  return read ? read() : undefined;
}

export async function episodeMetaCommon(assignment: EpisodeAssignment, plan: EpisodePlan, hardware: Pick<CellHardware, "motors" | "cameras">, cell: { cellId: string; robotModel: string }): Promise<Record<string, unknown>> {
  const { motors } = hardware;
  const state = await motors.readState().catch(() => undefined);
  const byJoint = (values: readonly number[] | undefined) =>
    values ? Object.fromEntries(motors.jointNames.map((name, i) => [name, values[i]])) : {};
  return {
    firmware: await motors.readFirmware(),
    calibration_age_s: (await optional(motors.readCalibrationAgeS?.bind(motors))) ?? null,
    actuator_cycle_counts: byJoint(await optional(motors.readCycleCounts?.bind(motors))),
    thermal_state: { temperature_c: byJoint(state?.temperatureC) },
    seed: assignment.seed,
    perturbations_realized: plan.realized,
    cameras: Object.fromEntries(hardware.cameras.map((c) => [c.name, c.calibration ?? null])),
    camera_clocks: Object.fromEntries(hardware.cameras.map((c) => [c.name, cameraClockRecord(c)])),
    cell_id: cell.cellId,
    robot: assignment.robot || cell.robotModel,
    environment: assignment.environment,
    task: assignment.task.rev ?? assignment.task.name,
    policy: assignment.policy,
    run_id: assignment.runId,
    episode_id: assignment.episodeId,
    attempt: assignment.attempt,
  };
}
