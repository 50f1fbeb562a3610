/**
 * A rosbridge v2 server over WebSocket in front of a simulated ROS robot, speaking the real protocol
 * so roslib talks to it unchanged: /joint_states published to subscribers, position commands taken
 * from a Float64MultiArray topic, SetBool torque and Trigger firmware services, `status` ops for
 * errors. Faults a test can switch at runtime: drop every client, refuse new ones, delay outgoing
 * messages, send malformed frames.
 */
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import {
  FragmentBuffer, float64Data, idOf, isObject, isStatusLevel, sameRosType, statusMessage, statusPasses,
  type Json, type StatusLevel,
} from "./rosbridge-protocol.js";
import type { SimRosRobot } from "./sim-ros-robot.js";

export interface SimRosbridgeNames {
  jointStates: string;
  commands: string;
  setTorque: string;
  firmware: string;
  wristFt: string;
}

export interface SimRosbridgeOptions {
  robot: SimRosRobot;
  /** /joint_states (and wrist wrench) publish rate, Hz of simulated time (default 50). */
  jointStatesRateHz?: number;
  /** Physics timer rate, Hz (default 100). 0: no timer; the test drives time with `advance(dtS)`. */
  tickHz?: number;
  /** Topic and service names (defaults match RosMotorBus's). */
  names?: Partial<SimRosbridgeNames>;
  /** Joint order on /joint_states: "sorted" by name like many joint_state_broadcasters (default), or the robot's. */
  publishOrder?: "sorted" | "model";
  /** Wall clock for header stamps, ms since the epoch (default Date.now). */
  wallClockMs?: () => number;
  /** Listen address (default 127.0.0.1, port 0). */
  host?: string;
  port?: number;
}

export type MalformedFrameKind = "invalid_json" | "unknown_op" | "op_not_string" | "wrong_field_types";

const DEFAULT_NAMES: SimRosbridgeNames = {
  jointStates: "/joint_states",
  commands: "/joint_group_position_controller/commands",
  setTorque: "/assay/set_torque",
  firmware: "/assay/firmware",
  wristFt: "/wrist_ft",
};

const TOPIC_TYPES = (n: SimRosbridgeNames): Record<string, string> => ({
  [n.jointStates]: "sensor_msgs/msg/JointState",
  [n.commands]: "std_msgs/msg/Float64MultiArray",
  [n.wristFt]: "geometry_msgs/msg/WrenchStamped",
});

interface Subscription { id: string | undefined; topic: string; throttleRateMs: number; lastSentMs: number }

interface Client {
  socket: WebSocket;
  level: StatusLevel;
  subscriptions: Subscription[];
  advertised: Set<string>;
  fragments: FragmentBuffer;
  lastDueMs: number;
}

/** What the server saw, for assertions. */
export interface SimRosbridgeCounters {
  /** Calls of advance(): physics steps taken. */
  ticks: number;
  connections: number;
  refusedConnections: number;
  commandsApplied: number;
  serviceCalls: number;
  received: Record<string, number>;
}

export class SimRosbridgeServer {
  readonly robot: SimRosRobot;
  readonly names: SimRosbridgeNames;
  readonly counters: SimRosbridgeCounters = { ticks: 0, connections: 0, refusedConnections: 0, commandsApplied: 0, serviceCalls: 0, received: {} };
  private readonly clients = new Set<Client>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly topicTypes: Record<string, string>;
  private readonly wallClockMs: () => number;
  private readonly publishPeriodS: number;
  private readonly publishOrder: number[];
  private tick: NodeJS.Timeout | null = null;
  private sincePublishS = 0;
  private accepting = true;
  private delayMs = 0;

  private constructor(private readonly wss: WebSocketServer, options: SimRosbridgeOptions) {
    this.robot = options.robot;
    this.names = { ...DEFAULT_NAMES, ...options.names };
    this.topicTypes = TOPIC_TYPES(this.names);
    this.wallClockMs = options.wallClockMs ?? Date.now;
    this.publishPeriodS = 1 / (options.jointStatesRateHz ?? 50);
    const order = this.robot.jointNames.map((_, i) => i);
    if ((options.publishOrder ?? "sorted") === "sorted") order.sort((a, b) => this.robot.jointNames[a].localeCompare(this.robot.jointNames[b]));
    this.publishOrder = order;
    wss.on("connection", (socket) => this.accept(socket));
    const tickHz = options.tickHz ?? 100;
    if (tickHz > 0) this.tick = setInterval(() => this.advance(1 / tickHz), 1000 / tickHz);
  }

  /** Starts listening; resolves once the port is bound. */
  static async start(options: SimRosbridgeOptions): Promise<SimRosbridgeServer> {
    let server: SimRosbridgeServer | null = null;
    const wss = new WebSocketServer({
      host: options.host ?? "127.0.0.1",
      port: options.port ?? 0,
      verifyClient: (_info, done) => {
        if (server && !server.accepting) {
          server.counters.refusedConnections++;
          done(false, 503, "rosbridge simulator refusing connections");
        } else done(true);
      },
    });
    await new Promise<void>((resolve, reject) => {
      wss.once("listening", resolve);
      wss.once("error", reject);
    });
    server = new SimRosbridgeServer(wss, options);
    return server;
  }

  get url(): string {
    const { address, port } = this.wss.address() as AddressInfo;
    return `ws://${address}:${port}`;
  }

  get clientCount(): number {
    return this.clients.size;
  }

  /** Advances the robot by `dtS` and publishes when a publish period has passed. */
  advance(dtS: number): void {
    this.robot.step(dtS);
    this.counters.ticks++;
    this.sincePublishS += dtS;
    if (this.sincePublishS + 1e-9 >= this.publishPeriodS) {
      this.sincePublishS = 0;
      this.publishSensors();
    }
  }

  /**
   * Adds a topic this robot publishes beyond its joint states and wrench (a camera's image topic), so
   * clients may subscribe to it; `publish` then sends to them.
   */
  advertiseTopic(topic: string, type: string): void {
    this.topicTypes[topic] = type;
  }

  /** Publishes `msg` on an advertised topic to its subscribers now. */
  publish(topic: string, msg: Json): void {
    if (!(topic in this.topicTypes)) throw new Error(`publish ${topic}: advertiseTopic it first`);
    this.publishTopic(topic, msg);
  }

  /** Publishes /joint_states and the wrist wrench to their subscribers now. */
  publishSensors(): void {
    const stamp = this.stamp();
    const s = this.robot.snapshot();
    const pick = (values: number[]): number[] => this.publishOrder.map((i) => values[i]);
    this.publishTopic(this.names.jointStates, {
      header: { stamp, frame_id: "" },
      name: this.publishOrder.map((i) => this.robot.jointNames[i]),
      position: pick(s.positionRad), velocity: pick(s.velocityRadS), effort: pick(s.effort),
    });
    const [fx, fy, fz] = this.robot.wrench.forceN;
    const [tx, ty, tz] = this.robot.wrench.torqueNm;
    this.publishTopic(this.names.wristFt, { header: { stamp, frame_id: "wrist_ft" }, wrench: { force: { x: fx, y: fy, z: fz }, torque: { x: tx, y: ty, z: tz } } });
  }

  /**
   * Resolves once every client has processed everything sent to it so far: a WebSocket ping follows
   * the messages on each connection and the client's pong comes back after them (ws answers pings in
   * order). A client that does not answer within `timeoutMs` is not waited for.
   */
  flush(timeoutMs = 1000): Promise<void> {
    const open = [...this.clients].filter((c) => c.socket.readyState === c.socket.OPEN);
    return Promise.all(open.map((client) => new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        client.socket.removeListener("pong", done);
        client.socket.removeListener("close", done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      client.socket.once("pong", done);
      client.socket.once("close", done);
      client.socket.ping();
    }))).then(() => undefined);
  }

  /** Fault: drops every client at once, like a cable pull (no close handshake). */
  disconnectAll(): void {
    for (const client of this.clients) client.socket.terminate();
  }

  /** Fault: while false, new connections are refused with HTTP 503. */
  setAcceptingConnections(accepting: boolean): void {
    this.accepting = accepting;
  }

  /** Fault: every outgoing message from now on leaves `ms` later (order kept). 0 turns it off. */
  setMessageDelayMs(ms: number): void {
    this.delayMs = ms;
  }

  /** Fault: sends one malformed frame to every client. */
  sendMalformed(kind: MalformedFrameKind): void {
    const frames: Record<MalformedFrameKind, string> = {
      invalid_json: '{"op": "publish", "topic": ',
      unknown_op: JSON.stringify({ op: "teleport", id: "x" }),
      op_not_string: JSON.stringify({ op: 42, topic: this.names.jointStates }),
      wrong_field_types: JSON.stringify({ op: "publish", topic: this.names.jointStates, msg: { name: "all", position: "zero", velocity: {}, effort: 7 } }),
    };
    for (const client of this.clients) this.send(client, frames[kind]);
  }

  async close(): Promise<void> {
    if (this.tick) clearInterval(this.tick);
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const client of this.clients) client.socket.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private stamp(): { sec: number; nanosec: number } {
    const ms = this.wallClockMs();
    const sec = Math.floor(ms / 1000);
    return { sec, nanosec: Math.round((ms - sec * 1000) * 1e6) };
  }

  private accept(socket: WebSocket): void {
    const client: Client = { socket, level: "error", subscriptions: [], advertised: new Set(), fragments: new FragmentBuffer(), lastDueMs: 0 };
    this.clients.add(client);
    this.counters.connections++;
    socket.on("message", (data, isBinary) => this.receive(client, isBinary ? null : data.toString()));
    socket.on("close", () => this.clients.delete(client));
    socket.on("error", () => this.clients.delete(client));
  }

  private send(client: Client, message: object | string): void {
    const text = typeof message === "string" ? message : JSON.stringify(message);
    const now = Date.now();
    const dueMs = Math.max(now + this.delayMs, client.lastDueMs);
    client.lastDueMs = dueMs;
    const write = (): void => {
      if (client.socket.readyState === client.socket.OPEN) client.socket.send(text);
    };
    if (dueMs <= now) return write();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      write();
    }, dueMs - now);
    this.timers.add(timer);
  }

  private status(client: Client, level: StatusLevel, msg: string, id?: string): void {
    if (statusPasses(level, client.level)) this.send(client, statusMessage(level, msg, id));
  }

  private publishTopic(topic: string, msg: Json): void {
    const now = Date.now();
    for (const client of this.clients) {
      const subs = client.subscriptions.filter((s) => s.topic === topic);
      if (subs.length === 0) continue;
      // Several subscriptions of one client to one topic get one message, at the lowest throttle_rate.
      const throttleMs = Math.min(...subs.map((s) => s.throttleRateMs));
      const last = Math.max(...subs.map((s) => s.lastSentMs));
      if (throttleMs > 0 && now - last < throttleMs) continue;
      for (const s of subs) s.lastSentMs = now;
      this.send(client, { op: "publish", topic, msg });
    }
  }

  private receive(client: Client, text: string | null): void {
    if (text === null) return this.status(client, "error", "binary frames are not supported by this server; send JSON text");
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return this.status(client, "error", `Unable to load the JSON message: ${text.slice(0, 100)}`);
    }
    if (!isObject(message) || typeof message.op !== "string") {
      return this.status(client, "error", `Received a message without an op. All messages require 'op' field with value one of: advertise, unadvertise, publish, subscribe, unsubscribe, call_service, set_level, fragment. Message: ${text.slice(0, 100)}`);
    }
    this.counters.received[message.op] = (this.counters.received[message.op] ?? 0) + 1;
    const id = idOf(message);
    switch (message.op) {
      case "advertise": return this.onAdvertise(client, message, id);
      case "unadvertise": return this.onUnadvertise(client, message, id);
      case "publish": return this.onPublish(client, message, id);
      case "subscribe": return this.onSubscribe(client, message, id);
      case "unsubscribe": return this.onUnsubscribe(client, message, id);
      case "call_service": return this.onCallService(client, message, id);
      case "set_level":
        if (isStatusLevel(message.level)) client.level = message.level;
        return;
      case "fragment": {
        const whole = client.fragments.add(message);
        if (whole === "invalid") return this.status(client, "error", "fragment needs id, data (string), num and total (integers)", id);
        if (whole !== null) this.receive(client, whole);
        return;
      }
      case "auth": return;
      default:
        return this.status(client, "error", `Unknown operation: ${message.op}. Allowed operations: advertise, unadvertise, publish, subscribe, unsubscribe, call_service, set_level, fragment`, id);
    }
  }

  private checkTopic(client: Client, message: Json, id: string | undefined): { topic: string; type: string } | null {
    const { topic, type } = message;
    if (typeof topic !== "string" || topic === "") {
      this.status(client, "error", `${String(message.op)}: "topic" must be a string; got ${JSON.stringify(topic)}`, id);
      return null;
    }
    const known = this.topicTypes[topic];
    if (type !== undefined && typeof type !== "string") {
      this.status(client, "error", `${String(message.op)} ${topic}: "type" must be a string; got ${JSON.stringify(type)}`, id);
      return null;
    }
    if (known && typeof type === "string" && !sameRosType(known, type)) {
      this.status(client, "error", `${topic} already established with type ${known}; got ${type}`, id);
      return null;
    }
    if (!known && typeof type !== "string") {
      this.status(client, "error", `Cannot infer topic type for topic ${topic} as it is not yet advertised`, id);
      return null;
    }
    return { topic, type: known ?? (type as string) };
  }

  private onAdvertise(client: Client, message: Json, id: string | undefined): void {
    const checked = this.checkTopic(client, message, id);
    if (checked) client.advertised.add(checked.topic);
  }

  private onUnadvertise(client: Client, message: Json, id: string | undefined): void {
    const topic = message.topic;
    if (typeof topic !== "string" || !client.advertised.delete(topic)) {
      this.status(client, "warning", `unadvertise: this client is not advertising ${JSON.stringify(topic)}`, id);
    }
  }

  private onPublish(client: Client, message: Json, id: string | undefined): void {
    const topic = message.topic;
    if (typeof topic !== "string") return this.status(client, "error", `publish: "topic" must be a string; got ${JSON.stringify(topic)}`, id);
    if (topic !== this.names.commands) {
      if (!client.advertised.has(topic)) this.status(client, "error", `publish: topic ${topic} does not exist; advertise it first`, id);
      return;
    }
    const data = float64Data(message.msg, this.robot.jointNames.length);
    if (typeof data === "string") return this.status(client, "error", `publish ${topic}: message does not conform to std_msgs/msg/Float64MultiArray: ${data}`, id);
    this.robot.setTargets(data);
    this.counters.commandsApplied++;
  }

  private onSubscribe(client: Client, message: Json, id: string | undefined): void {
    const checked = this.checkTopic(client, message, id);
    if (!checked) return;
    if (!(checked.topic in this.topicTypes)) return this.status(client, "error", `subscribe: nothing publishes ${checked.topic} on this robot`, id);
    const throttle = message.throttle_rate ?? 0;
    if (typeof throttle !== "number" || throttle < 0) return this.status(client, "error", `subscribe ${checked.topic}: throttle_rate must be a number >= 0; got ${JSON.stringify(throttle)}`, id);
    client.subscriptions = client.subscriptions.filter((s) => !(s.topic === checked.topic && id !== undefined && s.id === id));
    client.subscriptions.push({ id, topic: checked.topic, throttleRateMs: throttle, lastSentMs: 0 });
    this.status(client, "info", `Subscribed to ${checked.topic}`, id);
  }

  private onUnsubscribe(client: Client, message: Json, id: string | undefined): void {
    const topic = message.topic;
    const before = client.subscriptions.length;
    // With an id only that subscription goes; without one, every subscription to the topic (protocol 3.4.5).
    client.subscriptions = client.subscriptions.filter((s) => !(s.topic === topic && (id === undefined || s.id === id)));
    if (client.subscriptions.length === before) this.status(client, "warning", `unsubscribe: no subscription to ${JSON.stringify(topic)}${id ? ` with id ${id}` : ""}`, id);
  }

  private onCallService(client: Client, message: Json, id: string | undefined): void {
    const service = message.service;
    const respond = (result: boolean, values: unknown): void =>
      this.send(client, { op: "service_response", ...(id === undefined ? {} : { id }), service, values, result });
    if (typeof service !== "string") return this.status(client, "error", `call_service: "service" must be a string; got ${JSON.stringify(service)}`, id);
    this.counters.serviceCalls++;
    const args = message.args ?? {};
    if (service === this.names.setTorque) {
      if (!isObject(args) || typeof args.data !== "boolean") return respond(false, `${service} (std_srvs/srv/SetBool) needs args {data: bool}; got ${JSON.stringify(args)}`);
      this.robot.setTorque(args.data);
      return respond(true, { success: true, message: args.data ? "torque enabled" : "torque disabled" });
    }
    if (service === this.names.firmware) return respond(true, { success: true, message: this.robot.firmware });
    respond(false, `Service ${service} does not exist`);
  }
}
