import { strict as assert } from "node:assert";
import { WebSocket } from "ws";
import { SimRosbridgeServer } from "../../simulators/rosbridge/rosbridge-server.js";
import { SimRosRobot } from "../../simulators/rosbridge/sim-ros-robot.js";

type Msg = Record<string, any>;

/** A raw rosbridge client: JSON text frames in, a queue of parsed frames out. */
class RawClient {
  private readonly inbox: Msg[] = [];
  private waiter: (() => void) | null = null;

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => {
      this.inbox.push(JSON.parse(data.toString()) as Msg);
      this.waiter?.();
    });
  }

  static async open(url: string): Promise<RawClient> {
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    return new RawClient(socket);
  }

  send(message: Msg | string): void {
    this.socket.send(typeof message === "string" ? message : JSON.stringify(message));
  }

  /** The next frame received, in order. */
  async next(): Promise<Msg> {
    while (this.inbox.length === 0) await new Promise<void>((resolve) => (this.waiter = resolve));
    return this.inbox.shift() as Msg;
  }

  /** Sends `message` and returns the next frame, so ordering proves what was (not) sent before it. */
  async call(message: Msg | string): Promise<Msg> {
    this.send(message);
    return this.next();
  }
}

describe("simulated rosbridge server (raw rosbridge v2 frames)", () => {
  let server: SimRosbridgeServer;
  let client: RawClient;
  const names = ["base_translate", "base_rotate", "lift", "arm_extend", "wrist_yaw", "wrist_pitch", "wrist_roll", "head_pan", "gripper"];

  beforeEach(async () => {
    const robot = SimRosRobot.forModel("stretch3", { maxVelocityRadS: 1 });
    server = await SimRosbridgeServer.start({ robot, tickHz: 0, wallClockMs: () => 1_700_000_000_250 });
    client = await RawClient.open(server.url);
  });

  afterEach(async () => {
    client.socket.terminate();
    await server.close();
  });

  it("subscribe -> publish ops carrying a sensor_msgs/JointState, joints sorted by name", async () => {
    client.send({ op: "subscribe", id: "sub-1", topic: "/joint_states", type: "sensor_msgs/msg/JointState", throttle_rate: 0, queue_length: 1 });
    const firmware = await client.call({ op: "call_service", id: "sync", service: "/assay/firmware", args: {} });
    assert.equal(firmware.op, "service_response", "subscribe sends nothing back at the default status level");
    server.publishSensors();
    const frame = await client.next();
    assert.equal(frame.op, "publish");
    assert.equal(frame.topic, "/joint_states");
    assert.deepEqual(frame.msg.name, [...names].sort());
    assert.deepEqual(frame.msg.position, new Array(9).fill(0));
    assert.equal(frame.msg.velocity.length, 9);
    assert.equal(frame.msg.effort.length, 9);
    assert.deepEqual(frame.msg.header.stamp, { sec: 1_700_000_000, nanosec: 250_000_000 });
  });

  it("advertise + publish on the command topic moves the joints at the velocity limit", async () => {
    client.send({ op: "advertise", id: "adv-1", topic: "/joint_group_position_controller/commands", type: "std_msgs/msg/Float64MultiArray" });
    client.send({ op: "publish", topic: "/joint_group_position_controller/commands", msg: { layout: { dim: [], data_offset: 0 }, data: [0.5, -0.05, 0, 0, 0, 0, 0, 0, 0] } });
    await client.call({ op: "call_service", id: "sync", service: "/assay/firmware" });
    assert.equal(server.counters.commandsApplied, 1);
    server.advance(0.1);
    const p = server.robot.snapshot().positionRad;
    assert.ok(Math.abs(p[0] - 0.1) < 1e-9, `base_translate limited to 1 rad/s: ${p[0]}`);
    assert.ok(Math.abs(p[1] + 0.05) < 1e-9, `base_rotate reached its target: ${p[1]}`);
  });

  it("call_service -> service_response with the caller's id, service and result", async () => {
    const firmware = await client.call({ op: "call_service", id: "call-7", service: "/assay/firmware", args: {} });
    assert.deepEqual(firmware, { op: "service_response", id: "call-7", service: "/assay/firmware", values: { success: true, message: "0.8.4" }, result: true });
    const torque = await client.call({ op: "call_service", id: "call-8", service: "/assay/set_torque", args: { data: false } });
    assert.deepEqual(torque, { op: "service_response", id: "call-8", service: "/assay/set_torque", values: { success: true, message: "torque disabled" }, result: true });
    assert.equal(server.robot.torqueEnabled, false);
    const badArgs = await client.call({ op: "call_service", id: "call-9", service: "/assay/set_torque", args: { data: "off" } });
    assert.equal(badArgs.result, false);
    assert.match(badArgs.values, /needs args \{data: bool\}/);
    const missing = await client.call({ op: "call_service", id: "call-10", service: "/nope" });
    assert.deepEqual(missing, { op: "service_response", id: "call-10", service: "/nope", values: "Service /nope does not exist", result: false });
  });

  it("answers bad input with status ops at level error, echoing the id", async () => {
    const unknown = await client.call({ op: "teleport", id: "t-1" });
    assert.equal(unknown.op, "status");
    assert.equal(unknown.level, "error");
    assert.equal(unknown.id, "t-1");
    assert.match(unknown.msg, /Unknown operation: teleport/);
    assert.match((await client.call("{not json")).msg, /Unable to load the JSON message/);
    assert.match((await client.call({ op: 3 })).msg, /without an op/);
    const badPublish = await client.call({ op: "publish", id: "p-1", topic: "/joint_group_position_controller/commands", msg: { data: [1, 2] } });
    assert.equal(badPublish.id, "p-1");
    assert.match(badPublish.msg, /does not conform to std_msgs\/msg\/Float64MultiArray/);
    const wrongType = await client.call({ op: "subscribe", id: "s-2", topic: "/joint_states", type: "std_msgs/msg/String" });
    assert.match(wrongType.msg, /already established with type sensor_msgs\/msg\/JointState/);
  });

  it("unsubscribe by id stops the messages; set_level info reports successes", async () => {
    client.send({ op: "set_level", level: "info" });
    const subscribed = await client.call({ op: "subscribe", id: "sub-9", topic: "/joint_states" });
    assert.deepEqual(subscribed, { op: "status", id: "sub-9", level: "info", msg: "Subscribed to /joint_states" });
    client.send({ op: "unsubscribe", id: "sub-9", topic: "/joint_states" });
    await client.call({ op: "call_service", id: "sync", service: "/assay/firmware" });
    server.publishSensors();
    const after = await client.call({ op: "call_service", id: "after", service: "/assay/firmware" });
    assert.equal(after.op, "service_response", "no publish arrived between unsubscribe and this reply");
    const again = await client.call({ op: "unsubscribe", id: "sub-9", topic: "/joint_states" });
    assert.equal(again.level, "warning");
  });

  it("reassembles fragment ops sent by a client", async () => {
    const whole = JSON.stringify({ op: "call_service", id: "frag-call", service: "/assay/firmware" });
    const half = Math.floor(whole.length / 2);
    client.send({ op: "fragment", id: "f1", data: whole.slice(half), num: 1, total: 2 });
    const reply = await client.call({ op: "fragment", id: "f1", data: whole.slice(0, half), num: 0, total: 2 });
    assert.equal(reply.id, "frag-call");
    assert.equal(reply.values.message, "0.8.4");
  });
});
