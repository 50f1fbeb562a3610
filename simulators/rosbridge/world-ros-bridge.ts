/**
 * Puts a SimWorld's robot behind the simulated rosbridge server, so a simulated ROS cell (humanoid,
 * quadruped with arm, mobile manipulator) is driven by the real `RosMotorBus` over a loopback WebSocket:
 *
 *   RosMotorBus --roslib/ws--> SimRosbridgeServer --> WorldRosRobot --> SimWorld
 *
 * The world is the physics: commands on the position controller topic set the world's joint goals,
 * /joint_states carries the world's measured joints (effort = motor current, A), the SetBool torque
 * service maps to world.setTorque, and the Trigger firmware service answers the cell's firmware pin.
 *
 * Time: the server's own physics timer is off. `sync()` runs after every step of the simulated clock:
 * it publishes /joint_states (and the wrist wrench) for the new instant and waits until every client
 * has processed it (WebSocket ping/pong behind the messages). So a reading is never older than the
 * step that produced it, whatever the simulation speed, and the agent sees the same values for the same
 * seed. RosMotorBus's staleness check (maxStateAgeMs) runs on the simulated clock (see openWorldRosBus).
 */
import { RosMotorBus } from "../../cell-agent/devices/ros/ros-motor-bus.js";
import type { Clock } from "../../cell-agent/hardware/types.js";
import type { SimEstopInput } from "../devices/sim-estop-input.js";
import type { SimWorld } from "../world/sim-world.js";
import { SimRosbridgeServer } from "./rosbridge-server.js";
import { SimRosRobot } from "./sim-ros-robot.js";

/** Lever from the wrist sensor to the fingertip, metres (as SimWristForceTorque). */
const FT_LEVER_M = 0.1;

/**
 * Simulated staleness limit for RosMotorBus, ms of simulated time. Readings are refreshed after every
 * clock step (at most 20 ms of simulated time), so 250 ms only trips when publishing really stopped.
 */
export const SIM_MAX_STATE_AGE_MS = 250;

/** A SimRosRobot whose joints are the world's: no physics of its own. */
export class WorldRosRobot extends SimRosRobot {
  private torqueWanted: boolean;
  private cached: { positionRad: number[]; velocityRadS: number[]; effort: number[] } | null = null;
  private cachedAtNs = -1n;
  private cachedTruth: number[] = [];

  constructor(private readonly world: SimWorld, firmware: string, private readonly estop: SimEstopInput) {
    super({ jointNames: [...world.embodiment.jointNames], firmware });
    this.torqueWanted = world.servos.torqueEnabled;
    this.torqueEnabled = this.torqueWanted;
    estop.onTrigger(() => this.apply());
  }

  override setTargets(targetRad: readonly number[]): void {
    this.apply();
    this.world.setGoals(targetRad);
  }

  override setTorque(enabled: boolean): void {
    this.torqueWanted = enabled;
    this.torqueEnabled = enabled;
    // Re-enabling holds where the joints are, as a ROS driver does; an old target must not yank them.
    if (enabled) this.world.setGoals(this.world.servos.positionRad);
    this.apply();
  }

  /** The world integrates; the server's timer (off in simulated cells) must not move anything. */
  override step(): void {}

  /**
   * Measured joints for /joint_states, drawn once per world instant (and again if a reset moved the
   * arm), so however often it is published the world's sensor noise stream advances the same way.
   * Also refreshes the wrist wrench published beside them.
   */
  override snapshot(): { positionRad: number[]; velocityRadS: number[]; effort: number[] } {
    this.apply();
    const truth = this.world.servos.positionRad;
    if (this.cached === null || this.cachedAtNs !== this.world.tNs || !truth.every((p, i) => p === this.cachedTruth[i])) {
      const measured = this.world.measuredJoints();
      this.cached = { positionRad: measured.positionRad, velocityRadS: measured.velocityRadS, effort: measured.currentA };
      this.cachedAtNs = this.world.tNs;
      this.cachedTruth = [...truth];
    }
    const [fx, fy, fz] = this.world.contactForceN;
    this.wrench = { forceN: [fx, fy, fz], torqueNm: [FT_LEVER_M * fy, -FT_LEVER_M * fx, 0] };
    return this.cached;
  }

  private apply(): void {
    this.world.setTorque(this.torqueWanted && !this.estop.isPressed());
  }
}

export interface WorldRosBusOptions {
  world: SimWorld;
  estop: SimEstopInput;
  /** The cell's firmware pin, answered by the firmware service. */
  firmware: string;
  /** The agent's clock (the simulated clock): stamps readings and ages them. */
  clock: Pick<Clock, "nowNs">;
}

export interface WorldRosBus {
  motors: RosMotorBus;
  server: SimRosbridgeServer;
  /**
   * Publishes the world's state now; with `wait` (before the clock wakes the agent) also waits until
   * the bus has it. Call after every world step.
   */
  sync(wait: boolean): Promise<void>;
  close(): Promise<void>;
}

/** Starts the server on a loopback port, connects the real RosMotorBus, and waits for its first complete reading. */
export async function openWorldRosBus(options: WorldRosBusOptions): Promise<WorldRosBus> {
  const { world, estop, firmware, clock } = options;
  const server = await SimRosbridgeServer.start({ robot: new WorldRosRobot(world, firmware, estop), tickHz: 0, publishOrder: "sorted" });
  const motors = new RosMotorBus(
    {
      url: server.url,
      jointNames: [...world.embodiment.jointNames],
      maxStateAgeMs: SIM_MAX_STATE_AGE_MS,
      effortIsCurrentA: true,
      reconnect: { initialMs: 20, maxMs: 1000, jitter: 0 },
    },
    { clock, random: () => 0.5 },
  );
  // The subscription is made once the link connects; publish until the first reading is in.
  const publisher = setInterval(() => server.publishSensors(), 10);
  try {
    await motors.waitUntilReady(5000);
  } catch (error) {
    await motors.close();
    await server.close();
    throw error;
  } finally {
    clearInterval(publisher);
  }
  return {
    motors,
    server,
    async sync(wait) {
      server.publishSensors();
      if (wait) await server.flush();
    },
    async close() {
      await motors.close();
      await server.close();
    },
  };
}
