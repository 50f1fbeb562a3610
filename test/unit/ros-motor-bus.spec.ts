import { strict as assert } from "node:assert";
import { RosBusError } from "../../cell-agent/devices/ros/ros-bus-error.js";
import type { RosLinkEvent } from "../../cell-agent/devices/ros/ros-link.js";
import { RosMotorBus, type RosMotorBusInput } from "../../cell-agent/devices/ros/ros-motor-bus.js";
import { loadRoslib } from "../../cell-agent/devices/ros/roslib.js";
import { loadPackage } from "../../protocol/load-package.js";
import { SimRosbridgeServer } from "../../simulators/rosbridge/rosbridge-server.js";
import { SimRosRobot } from "../../simulators/rosbridge/sim-ros-robot.js";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { eventually } from "../support/eventually.js";

const jointsOf = (model: string): string[] => loadFirmwarePins().models.find((m) => m.id === model)!.joints;

/** Resolves when `condition` holds (checked every 5 ms); fails naming `what` after 3 s. */
const until = (condition: () => boolean | Promise<boolean>, what: string) => eventually(what, condition, { deadlineMs: 3000, intervalMs: 5 });

async function rejection(promise: Promise<unknown>): Promise<RosBusError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof RosBusError, `expected a RosBusError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected a rejection");
}

const near = (a: number[], b: number[], tol = 1e-6): boolean => a.length === b.length && a.every((v, i) => Math.abs(v - b[i]) <= tol);

describe("RosMotorBus through roslib against the simulated rosbridge", function () {
  this.timeout(8000);
  let server: SimRosbridgeServer;
  let bus: RosMotorBus | null = null;
  let events: RosLinkEvent[];

  async function setUp(model: string, robotOptions: { maxVelocityRadS?: number; initialPositionRad?: number[]; gripperJoint?: string }, busOptions: Partial<RosMotorBusInput> = {}): Promise<RosMotorBus> {
    server = await SimRosbridgeServer.start({ robot: SimRosRobot.forModel(model, robotOptions), jointStatesRateHz: 100 });
    events = [];
    bus = new RosMotorBus(
      { url: server.url, jointNames: jointsOf(model), maxStateAgeMs: 250, reconnect: { initialMs: 20, maxMs: 400, jitter: 0 }, ...busOptions },
      { onEvent: (event) => events.push(event) },
    );
    await bus.waitUntilReady(3000);
    return bus;
  }

  afterEach(async () => {
    await bus?.close();
    bus = null;
    await server.close();
  });

  it("reads joint state in the catalog's order although /joint_states comes sorted by name; reads firmware", async () => {
    const names = jointsOf("g1");
    const initial = names.map((_, i) => i / 100);
    const g1 = await setUp("g1", { initialPositionRad: initial });
    const state = await g1.readState();
    assert.deepEqual(g1.jointNames, names);
    assert.ok(near(state.positionRad, initial), `positions ${state.positionRad}`);
    assert.equal(state.velocityRadS.length, 23);
    assert.ok(state.currentA.every(Number.isNaN), "JointState.effort is not current unless configured");
    assert.equal(await g1.readFirmware(), "1.4.2");
  });

  it("writes targets in the controller's joint order and the simulated joints move there", async () => {
    const controllerOrder = jointsOf("b2z1");
    const agentOrder = [...controllerOrder].reverse();
    const b2 = await setUp("b2z1", { maxVelocityRadS: 4 }, { jointNames: agentOrder, commandJointNames: controllerOrder });
    const target = agentOrder.map((_, i) => 0.2 + i * 0.01);
    await b2.writeGoalPositions(target);
    await until(async () => near((await b2.readState()).positionRad, target), "joints at their targets");
    const sim = server.robot.snapshot().positionRad;
    assert.ok(near(sim, [...target].reverse()), `the simulator got the targets in its controller order: ${sim}`);
    await assert.rejects(b2.writeGoalPositions([1, 2]), /needs 19 targets/);
  });

  it("torque off through the service stops motion, and later targets do not move the joints", async () => {
    const stretch = await setUp("stretch3", { maxVelocityRadS: 0.5 });
    await stretch.writeGoalPositions(new Array(9).fill(2));
    await until(async () => (await stretch.readState()).positionRad[0] > 0.05, "motion started");
    await stretch.setTorque(false);
    assert.equal(server.robot.torqueEnabled, false);
    const stoppedAt = server.robot.snapshot().positionRad;
    await stretch.writeGoalPositions(new Array(9).fill(-2));
    const ticks = server.counters.ticks;
    await until(() => server.counters.ticks >= ticks + 10, "10 more simulator ticks");
    await until(async () => near((await stretch.readState()).positionRad, stoppedAt), "a reading taken after torque off");
    const later = await stretch.readState();
    assert.ok(near(later.positionRad, stoppedAt), `no motion after torque off: ${later.positionRad} vs ${stoppedAt}`);
    assert.ok(later.velocityRadS.every((v) => v === 0));
    assert.ok(stoppedAt[0] < 2, "stopped short of the target");
  });

  it("reconnects by itself with exponential backoff after the server drops it, refusing I/O meanwhile", async () => {
    const g1 = await setUp("g1", {});
    server.setAcceptingConnections(false);
    server.disconnectAll();
    await until(() => g1.state !== "connected", "the bus to notice the drop");
    assert.equal((await rejection(g1.readState())).code, "disconnected");
    const refused = await rejection(g1.writeGoalPositions(new Array(23).fill(0)));
    assert.equal(refused.code, "disconnected");
    assert.match(refused.message, /reconnecting by itself/);
    assert.equal((await rejection(g1.setTorque(false))).code, "disconnected");
    await until(() => events.filter((e) => e.kind === "backoff").length >= 4, "four backoff delays");
    const delays = events.flatMap((e) => (e.kind === "backoff" ? [e.delayMs] : []));
    assert.deepEqual(delays.slice(0, 4), [20, 40, 80, 160]);
    assert.ok(server.counters.refusedConnections >= 3);
    server.setAcceptingConnections(true);
    await g1.waitUntilReady(3000);
    await g1.readState();
    await g1.writeGoalPositions(new Array(23).fill(0.1));
    const stats = g1.stats();
    assert.equal(stats.reconnects, 1);
    assert.equal(stats.refusedWrites, 1);
    assert.ok(stats.connectAttempts >= 5, `attempts ${stats.connectAttempts}`);
  });

  it("when roslib cannot be loaded, says so as the outage, backs off and tries again until it loads", async () => {
    server = await SimRosbridgeServer.start({ robot: SimRosRobot.forModel("g1", {}), jointStatesRateHz: 100 });
    events = [];
    let loads = 0;
    const loader = () => {
      loads++;
      // Two failed loads (as protocol/load-package.ts words them), then the package itself.
      return loads <= 2 ? loadPackage(() => Promise.reject(new Error("Cannot find package 'roslib'\nRequire stack: ...")), "the ROS client library (roslib)") : loadRoslib();
    };
    const g1 = new RosMotorBus(
      { url: server.url, jointNames: jointsOf("g1"), maxStateAgeMs: 250, reconnect: { initialMs: 20, maxMs: 400, jitter: 0 } },
      { onEvent: (event) => events.push(event), loadRoslib: loader },
    );
    bus = g1;
    await until(() => events.some((e) => e.kind === "backoff"), "the first failed load's backoff");
    const refused = await rejection(g1.readState());
    assert.equal(refused.code, "disconnected");
    assert.match(refused.message, /^cannot read joint state: rosbridge at \S+ is (connecting|disconnected) \(the ROS client library \(roslib\) could not be loaded \(Cannot find package 'roslib'\); is the installation complete \(npm ci\)/);
    await g1.waitUntilReady(3000);
    assert.equal(loads, 3);
    assert.deepEqual(events.filter((e) => e.kind === "backoff").map((e) => (e as { delayMs: number }).delayMs), [20, 40]);
    assert.deepEqual(events.filter((e) => e.kind === "connected"), [{ kind: "connected", attempt: 3 }]);
    const stats = g1.stats();
    assert.equal(stats.connectAttempts, 3);
    assert.equal(stats.reconnects, 0);
    await g1.readState();
  });

  it("counts malformed frames without crashing or dropping the connection", async () => {
    const g1 = await setUp("g1", {});
    for (const kind of ["invalid_json", "unknown_op", "op_not_string", "wrong_field_types"] as const) server.sendMalformed(kind);
    await until(() => g1.stats().malformedMessages >= 4, "four malformed frames counted");
    await g1.readState();
    const stats = g1.stats();
    assert.equal(stats.malformedMessages, 4);
    assert.equal(stats.reconnects, 0);
    assert.equal(stats.state, "connected");
    assert.deepEqual(events.filter((e) => e.kind === "malformed").length, 4);
  });

  it("reports staleness when rosbridge delays messages, and recovers when the delay ends", async () => {
    const g1 = await setUp("g1", {}, { maxStateAgeMs: 100, maxStampLagMs: 150 });
    server.setMessageDelayMs(400);
    let stale: RosBusError | null = null;
    await until(async () => {
      stale = await g1.readState().then(() => null, (error: RosBusError) => error);
      return stale !== null;
    }, "a stale read");
    assert.equal(stale!.code, "stale");
    assert.match(stale!.message, /ms (old|after its header stamp)/);
    assert.ok(g1.stats().staleReads >= 1);
    server.setMessageDelayMs(0);
    await until(async () => g1.readState().then(() => true, () => false), "fresh readings again");
  });

  it("reads the gripper from its joint and the wrist wrench from its topic", async () => {
    const stretch = await setUp("stretch3", { maxVelocityRadS: 5, gripperJoint: "gripper", initialPositionRad: [0, 0, 0, 0, 0, 0, 0, 0, 1] }, {
      gripper: { jointName: "gripper", closedPositionRad: 0, openPositionRad: 1, holdingEffort: 1 },
      wristFt: {},
    });
    assert.deepEqual({ ...(await stretch.gripper!.read()), tNs: 0n }, { tNs: 0n, opening: 1, holding: false });
    server.robot.gripperObstacleRad = 0.4;
    server.robot.wrench = { forceN: [1, 2, 3], torqueNm: [0.1, 0.2, 0.3] };
    await stretch.writeGoalPositions([0, 0, 0, 0, 0, 0, 0, 0, 0]);
    await until(async () => (await stretch.gripper!.read()).holding, "the gripper to hold");
    const grip = await stretch.gripper!.read();
    assert.ok(Math.abs(grip.opening - 0.4) < 1e-6, `opening ${grip.opening}`);
    await until(async () => (await stretch.wristFt!.read()).forceN[2] === 3, "the new wrench");
    assert.deepEqual((await stretch.wristFt!.read()).torqueNm, [0.1, 0.2, 0.3]);
  });
});
