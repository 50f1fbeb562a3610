/**
 * Builds a whole simulated cell: one SimWorld and every device over it, with the instruments the
 * environment declares (e.g. bench-bare@1 has no top camera, mocap or wrist F/T).
 */
import type { CellHardware } from "../cell-agent/hardware/types.js";
import { SimCamera } from "./devices/sim-camera.js";
import { SimClock } from "./devices/sim-clock.js";
import { SimEstopInput } from "./devices/sim-estop-input.js";
import { SimGripperSensor, SimMocapSource, SimWristForceTorque } from "./devices/sim-instruments.js";
import { SimMotorBus } from "./devices/sim-motor-bus.js";
import { SimSceneReset } from "./devices/sim-scene-reset.js";
import { instrumentsOf, type Instrument } from "./environment-instruments.js";
import { ReferencePolicyRuntime } from "./policies/reference-runtime.js";
import { catalogModel } from "./world/embodiments.js";
import { SimWorld } from "./world/sim-world.js";

export interface SimulatedCellOptions {
  /** Catalog robot model id, e.g. "so101". */
  model: string;
  /** Firmware the simulated hardware reports, e.g. "3.11"; must be a release of the model. */
  firmware: string;
  /** Environment pin, e.g. "tabletop@1". */
  environment: string;
  /** Seeds the world's physics and noise. */
  seed: number;
  /** Simulated seconds per wall second; Infinity runs unpaced. */
  speed: number;
  /** Overrides the environment catalog's instruments (tests). */
  instruments?: Instrument[];
}

export type SimulatedCell = CellHardware & { world: SimWorld; estop: SimEstopInput; clock: SimClock };

export function createSimulatedCell(options: SimulatedCellOptions): SimulatedCell {
  const model = catalogModel(options.model);
  if (!model.firmwares.includes(options.firmware)) {
    throw new Error(`firmware "${options.firmware}" is not a release of ${model.id}; releases: ${model.firmwares.join(", ")}`);
  }
  const instruments = options.instruments ?? instrumentsOf(options.environment);
  const has = (kind: string) => instruments.some((i) => i.kind === kind);
  const world = new SimWorld({ model: model.id, seed: options.seed });
  const clock = new SimClock(world, options.speed);
  const estop = new SimEstopInput();
  return {
    world,
    estop,
    clock,
    motors: new SimMotorBus(world, options.firmware, estop),
    cameras: instruments.filter((i) => i.kind === "camera" && i.name).map((i) => new SimCamera(world, i.name!)),
    gripper: has("gripper_state") ? new SimGripperSensor(world) : undefined,
    wristFt: has("ft_wrist") ? new SimWristForceTorque(world) : undefined,
    mocap: has("mocap") ? new SimMocapSource(world) : undefined,
    scene: new SimSceneReset(world, clock),
    policies: new ReferencePolicyRuntime(),
    async close() {},
  };
}
