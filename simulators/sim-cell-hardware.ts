/**
 * Builds a whole simulated cell: one SimWorld and every device over it, with the instruments the
 * environment declares (e.g. bench-bare@1 has no top camera, mocap or wrist F/T).
 *
 * With `devices: "wire"` (the default) the agent gets the real drivers, speaking the real protocols to
 * emulators whose state is the world's:
 *   - arm-pod (so101) and fixed-arm (fr3): `SerialServoBus` over a mock serial port to emulated Feetech
 *     STS3215 / Dynamixel X servos (the FR3's Dynamixel bus is a stand-in; world-servo-bridge.ts);
 *   - bimanual (aloha): one emulated Dynamixel bus per follower arm (XM540-W270 and XM430-W350), a
 *     `SerialServoBus` on each under one `MultiServoBus`, as a real aloha cell's agent builds it;
 *   - humanoid (g1), quadruped-manip (b2z1), mobile-manipulator (stretch3): `RosMotorBus` over a loopback
 *     WebSocket to the simulated rosbridge (world-ros-bridge.ts);
 *   - mocap: `NatNetClient` over loopback UDP to a simulated Motive (simulators/natnet/).
 * Every catalogue model has a wire emulation. Cameras, gripper sensor, wrist
 * F/T, scene reset, interventions (the technician's nudge) and policies are in-process either way.
 *
 * `devices: "in-process"` hands the agent the SimMotorBus / SimMocapSource objects that call the world
 * directly: the fallback if a wire path breaks, and the baseline the wire path is measured against.
 */
import type { CellHardware, MocapSource, MotorBus } from "../cell-agent/hardware/types.js";
import { NatNetClient, NatNetError } from "../cell-agent/devices/natnet/natnet-client.js";
import { SceneFaces } from "./render/scene-faces.js";
import { SimCamera } from "./devices/sim-camera.js";
import { SimClock } from "./devices/sim-clock.js";
import { SimEstopInput } from "./devices/sim-estop-input.js";
import { SimGripperSensor, SimMocapSource, SimWristForceTorque } from "./devices/sim-instruments.js";
import { SimMotorBus } from "./devices/sim-motor-bus.js";
import { SimSceneReset } from "./devices/sim-scene-reset.js";
import { OperatorSimSceneReset } from "./devices/operator-sim-scene-reset.js";
import type { SceneReadyGate } from "../cell-agent/devices/scene/scene-ready-gate.js";
import { SimIntervention } from "./devices/sim-intervention.js";
import { instrumentsOf, type Instrument } from "./environment-instruments.js";
import { InstrumentSwitches } from "./devices/instrument-switch.js";
import { SimNatNetServer } from "./natnet/natnet-server.js";
import { WorldMocapStream } from "./natnet/world-mocap-stream.js";
import { ReferencePolicyRuntime } from "./policies/reference-runtime.js";
import { openWorldRosBus } from "./rosbridge/world-ros-bridge.js";
import { SERIAL_SERVO_MODELS, openWorldServoBus, type WorldServoBusMember } from "./servo-bus/world-servo-bridge.js";
import type { MockServoPort } from "./servo-bus/mock-port.js";
import type { Calibration } from "../cell-agent/devices/servo/calibration.js";
import { catalogModel } from "./world/embodiments.js";
import { SimWorld } from "./world/sim-world.js";
import type { SimEngine } from "./physics/engine.js";
import type { CellVariation } from "./world/cell-variation.js";

/** How the agent reaches the simulated devices. */
export type SimDevices = "wire" | "in-process";

/** Robot models whose simulated cell speaks rosbridge. */
export const ROS_MODELS: readonly string[] = ["g1", "b2z1", "stretch3"];

/** Simulated ms a NatNet frame may age before the client calls it stale (frames follow every clock step). */
const SIM_MAX_FRAME_AGE_MS = 250;
/** Wall ms the clock waits for a mocap frame to reach the client before sending it again. */
const FRAME_DELIVERY_TIMEOUT_MS = 500;
/** Sends of one frame before the clock goes on without it (a client that stopped reading). */
const FRAME_DELIVERY_ATTEMPTS = 20;

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
  /**
   * Instrument kinds this cell lacks although its environment lists them (a lab without motion
   * capture: ["mocap"]); default none.
   */
  without?: readonly string[];
  /** "wire" (default): real drivers over emulated wire protocols; "in-process": devices call the world directly. */
  devices?: SimDevices;
  /** Physics engine of the world; default DEFAULT_SIM_ENGINE (MuJoCo). */
  engine?: SimEngine;
  /** Burn each frame's capture time into the cameras' pictures (render/timecode.ts; benches). */
  timecode?: boolean;
  /** This cell's own variation (world/cell-variation.ts, `cellVariationFor`); default none. */
  variation?: CellVariation;
  /**
   * Operator reset mode: resets wait at this gate for a person (or the simulated operator) to set the
   * scene (devices/operator-sim-scene-reset.ts). Default none: the simulated world resets itself.
   */
  sceneGate?: SceneReadyGate;
  /** Log lines of the operator-mode reset (default none). */
  log?: (line: string) => void;
}

export type SimulatedCell = CellHardware & {
  world: SimWorld; estop: SimEstopInput; clock: SimClock; devices: SimDevices; switches: InstrumentSwitches;
  /** Present in operator reset mode: lets the simulated operator set the next scene wrong. */
  operatorScene?: OperatorSimSceneReset;
  /**
   * Serial-servo models on the wire: the (first) emulated bus (its `written` bytes are what the servos
   * received) and its servos' calibration; `buses` lists every bus (aloha has two).
   */
  servoWire?: { mock: MockServoPort; calibration: Calibration; buses: WorldServoBusMember[] };
};

/** Builds the world and its devices; with "wire" it also starts the emulators and connects the drivers. */
export async function createSimulatedCell(options: SimulatedCellOptions): Promise<SimulatedCell> {
  const model = catalogModel(options.model);
  if (!model.firmwares.includes(options.firmware)) {
    throw new Error(`firmware "${options.firmware}" is not a release of ${model.id}; releases: ${model.firmwares.join(", ")}`);
  }
  const devices = options.devices ?? "wire";
  if (devices !== "wire" && devices !== "in-process") throw new Error(`simulated cell option devices must be "wire" or "in-process"; got ${JSON.stringify(devices)}`);
  const without = new Set(options.without ?? []);
  const instruments = (options.instruments ?? instrumentsOf(options.environment)).filter((i) => !without.has(i.kind));
  const switches = new InstrumentSwitches();
  const has = (kind: string) => instruments.some((i) => i.kind === kind);
  const world = new SimWorld({ model: model.id, seed: options.seed, engine: options.engine, variation: options.variation });
  // Wire devices publish after every clock step, before the sleepers it woke read anything.
  const afterStep: Array<(waking: boolean) => Promise<void>> = [];
  const clock = new SimClock(world, options.speed, devices === "wire" ? async (waking) => { for (const sync of afterStep) await sync(waking); } : undefined);
  const estop = new SimEstopInput();
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const closeOne of closers.splice(0).reverse()) await closeOne();
  };

  try {
    let motors: MotorBus = new SimMotorBus(world, options.firmware, estop);
    let mocap: MocapSource | undefined = has("mocap") ? new SimMocapSource(world) : undefined;
    let servoWire: SimulatedCell["servoWire"];
    if (devices === "wire") {
      if (SERIAL_SERVO_MODELS.includes(model.id)) {
        const servo = await openWorldServoBus({ world, estop, firmware: options.firmware });
        closers.push(() => servo.close());
        motors = servo.motors;
        servoWire = { mock: servo.mock, calibration: servo.buses[0].calibration, buses: servo.buses };
      } else if (ROS_MODELS.includes(model.id)) {
        const ros = await openWorldRosBus({ world, estop, firmware: options.firmware, clock });
        closers.push(() => ros.close());
        afterStep.push((waking) => ros.sync(waking));
        motors = ros.motors;
      }
      if (mocap) {
        const server = await SimNatNetServer.start();
        closers.push(() => server.close());
        const stream = new WorldMocapStream(world, server);
        stream.take();
        const client = await NatNetClient.connect(
          { serverAddress: server.address, commandPort: server.port, localAddress: "127.0.0.1", maxFrameAgeMs: SIM_MAX_FRAME_AGE_MS, modelDefRetryMs: 5 },
          { clock: { nowNs: () => world.tNs } },
        );
        closers.push(() => client.close());
        // The first frame went out before the client connected: send it again.
        await client.waitForFrame(stream.resend(), FRAME_DELIVERY_TIMEOUT_MS * 4);
        // A frame is taken on every step (its marker noise drawn), but only the newest goes out, when the clock is
        // about to wake a sleeper: the agent reads nothing but the newest frame, so it reads what it would if every
        // frame were sent (the client counts the numbers in between as dropped). The clock waits for its delivery:
        // a wait that times out is not a delivery. A process kept off the CPU for longer than the timeout runs the
        // expired timer before it reads the datagram waiting for it (libuv's timers come before its poll), and a
        // datagram can be lost; going on would have the agent read an older frame, and the episode (its idle end,
        // say) would depend on the machine's load. So the frame is sent again and waited for again.
        let undelivered = 0;
        afterStep.push(async (waking) => {
          stream.take();
          if (!waking) return;
          const frame = stream.flush();
          if (frame === null) return;
          for (let attempt = 1; ; attempt++) {
            try {
              await client.waitForFrame(frame, FRAME_DELIVERY_TIMEOUT_MS);
              return;
            } catch (error) {
              if (!(error instanceof NatNetError) || error.code !== "timeout") return; // "closed": the cell is closing
              if (attempt >= FRAME_DELIVERY_ATTEMPTS) {
                if (undelivered++ === 0) options.log?.(`mocap: NatNet frame ${frame} did not reach the agent's client after ${attempt} sends; the simulation goes on without it (logged once)`);
                return;
              }
              stream.resend();
            }
          }
        });
        mocap = client;
      }
    }
    const operatorScene = options.sceneGate ? new OperatorSimSceneReset(world, clock, { gate: options.sceneGate, log: options.log }) : undefined;
    // The cameras capture the same instant each step: the arm's and objects' faces are built once for all of them.
    const sceneFaces = new SceneFaces();
    return {
      world,
      estop,
      clock,
      devices,
      ...(operatorScene ? { operatorScene } : {}),
      switches,
      ...(servoWire ? { servoWire } : {}),
      motors,
      cameras: instruments.filter((i) => i.kind === "camera" && i.name).map((i) => new SimCamera(world, i.name!, undefined, { timecode: options.timecode, sceneFaces })),
      gripper: has("gripper_state") ? switches.gripper(new SimGripperSensor(world)) : undefined,
      wristFt: has("ft_wrist") ? switches.wristFt(new SimWristForceTorque(world)) : undefined,
      mocap: mocap && switches.mocap(mocap),
      scene: operatorScene ?? new SimSceneReset(world, clock),
      intervention: new SimIntervention(world, clock),
      policies: new ReferencePolicyRuntime(),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
