/**
 * One rosbridge connection kept alive by the agent itself: a fresh roslib `Ros` per attempt, and on
 * every close a reconnect after an exponential backoff with jitter. roslib's own re-subscribe on
 * reconnect is switched off (`reconnect_on_close: false`): this link re-creates subscriptions and
 * publishers on each connection, so nothing queued during an outage is replayed to the robot later.
 */
import { Backoff } from "../../link/backoff.js";
import { RosBusError } from "./ros-bus-error.js";
import { loadRoslib, type ITransport, type Ros, type RosLib, type RosbridgeMessage, type Topic } from "./roslib.js";

export type RosLinkState = "idle" | "connecting" | "connected" | "backoff" | "closed";

const TRANSITIONS: Record<RosLinkState, readonly RosLinkState[]> = {
  idle: ["connecting", "closed"],
  connecting: ["connected", "backoff", "closed"],
  connected: ["backoff", "closed"],
  backoff: ["connecting", "closed"],
  closed: [],
};

/** The only place that knows legal link transitions; throws on an illegal one. */
export function nextRosLinkState(from: RosLinkState, to: RosLinkState): RosLinkState {
  if (!TRANSITIONS[from].includes(to)) throw new Error(`illegal rosbridge link transition ${from} -> ${to}`);
  return to;
}

export type RosLinkEvent =
  | { kind: "connected"; attempt: number }
  | { kind: "disconnected"; reason: string }
  | { kind: "backoff"; delayMs: number; attempt: number }
  | { kind: "malformed"; reason: string }
  | { kind: "status"; level: string; msg: string; id?: string };

export interface RosLinkStats {
  /** Connection attempts, the first included. */
  connectAttempts: number;
  /** Connections opened after the first one. */
  reconnects: number;
  /** Frames or messages that could not be used (bad JSON, unknown op, wrong field types). */
  malformedMessages: number;
  /** `status` ops at level "error" received from rosbridge. */
  statusErrors: number;
}

export interface RosLinkOptions {
  url: string;
  connectTimeoutMs: number;
  reconnect: { initialMs: number; maxMs: number; jitter: number };
  random?: () => number;
  onEvent?: (event: RosLinkEvent) => void;
  /** Loads roslib (default `loadRoslib`: the package, on first use). A failed load is an outage like any other: backoff, then another attempt. */
  loadRoslib?: () => Promise<RosLib>;
}

interface Subscription {
  topic: string;
  type: string;
  throttleRateMs: number;
  queueLength: number;
  handler: (msg: unknown) => void;
}

/** Ops a rosbridge server may send to a client (rosbridge v2 protocol, section 2). */
const SERVER_OPS = new Set([
  "publish", "service_response", "status", "fragment", "png", "call_service",
  "send_action_goal", "cancel_action_goal", "action_feedback", "action_result",
]);

export class RosLink {
  private linkState: RosLinkState = "idle";
  private ros: Ros | null = null;
  /** roslib, loaded by the first connection attempt; set whenever `ros` is. */
  private roslib: RosLib | null = null;
  private readonly backoff: Backoff;
  private retryTimer: NodeJS.Timeout | null = null;
  private connectTimer: NodeJS.Timeout | null = null;
  private readonly subscriptions: Subscription[] = [];
  private readonly publishers = new Map<string, { type: string; topic: Topic<unknown> | null }>();
  private readonly pending = new Set<(error: Error) => void>();
  private everConnected = false;
  private lastReason = "not connected yet";
  private socketError: string | null = null;
  readonly stats: RosLinkStats = { connectAttempts: 0, reconnects: 0, malformedMessages: 0, statusErrors: 0 };

  constructor(private readonly options: RosLinkOptions) {
    this.backoff = new Backoff(options.reconnect, options.random);
  }

  get state(): RosLinkState {
    return this.linkState;
  }

  /** Starts connecting; returns at once. Watch `state` or events to learn when it is up. */
  start(): void {
    if (this.linkState === "idle") this.attempt();
  }

  /** Call once the connection has proven useful (data arrived), so the next outage starts from the shortest delay. */
  markHealthy(): void {
    this.backoff.reset();
  }

  /** Counts something unusable that arrived; it is dropped and the link goes on. */
  malformed(reason: string): void {
    this.stats.malformedMessages++;
    this.options.onEvent?.({ kind: "malformed", reason });
  }

  /** Why the link is not connected, for error messages. */
  describeOutage(): string {
    if (this.linkState === "closed") return `the ROS bus for ${this.options.url} was closed`;
    const phase = this.linkState === "connecting" ? "connecting" : this.linkState === "idle" ? "not started" : "disconnected";
    return `rosbridge at ${this.options.url} is ${phase} (${this.lastReason}); reconnecting by itself`;
  }

  /** Subscribes now if connected and again on every later connection. */
  subscribe(topic: string, type: string, handler: (msg: unknown) => void, rate: { throttleRateMs: number; queueLength: number }): void {
    const sub = { topic, type, handler, ...rate };
    this.subscriptions.push(sub);
    if (this.ros && this.linkState === "connected") this.openSubscription(this.ros, sub);
  }

  /** Declares a topic this link publishes; it is advertised on every connection. */
  advertise(topic: string, type: string): void {
    this.publishers.set(topic, { type, topic: null });
    if (this.ros && this.linkState === "connected") this.openPublisher(this.ros, topic);
  }

  /** Publishes on an advertised topic; refuses (throws "disconnected") rather than queueing during an outage. */
  publish(topic: string, msg: unknown): void {
    const publisher = this.publishers.get(topic);
    if (!publisher) throw new Error(`topic ${topic} was not advertised on this link`);
    if (this.linkState !== "connected" || !publisher.topic) {
      throw new RosBusError(this.linkState === "closed" ? "closed" : "disconnected", `refused to publish on ${topic}: ${this.describeOutage()}`);
    }
    publisher.topic.publish(msg);
  }

  /** Calls a service; rejects when disconnected, when the connection drops, or after `timeoutMs`. */
  callService<TRequest, TResponse>(name: string, type: string, request: TRequest, timeoutMs: number): Promise<TResponse> {
    const ros = this.ros;
    if (!ros || this.linkState !== "connected") {
      return Promise.reject(new RosBusError(this.linkState === "closed" ? "closed" : "disconnected", `cannot call ${name}: ${this.describeOutage()}`));
    }
    return new Promise<TResponse>((resolve, reject) => {
      const fail = (error: Error): void => {
        clearTimeout(timer);
        this.pending.delete(fail);
        reject(error);
      };
      const timer = setTimeout(() => fail(new RosBusError("service_failed", `${name} (${type}) did not answer within ${timeoutMs} ms; is the node that provides it running?`)), timeoutMs);
      this.pending.add(fail);
      const service = new this.roslib!.Service<TRequest, TResponse>({ ros, name, serviceType: type });
      service.callService(
        request,
        (response) => {
          clearTimeout(timer);
          this.pending.delete(fail);
          resolve(response);
        },
        (error) => fail(new RosBusError("service_failed", `${name} (${type}) failed: ${typeof error === "string" ? error : JSON.stringify(error)}`)),
        timeoutMs / 1000,
      );
    });
  }

  /** Closes the connection for good; pending calls reject with "closed". */
  close(): void {
    if (this.linkState === "closed") return;
    this.setState("closed");
    this.lastReason = "closed by the agent";
    this.clearTimers();
    this.dropRos(new RosBusError("closed", `the ROS bus for ${this.options.url} was closed`));
  }

  private setState(to: RosLinkState): void {
    this.linkState = nextRosLinkState(this.linkState, to);
  }

  private attempt(): void {
    this.setState("connecting");
    this.stats.connectAttempts++;
    const attempt = this.stats.connectAttempts;
    this.socketError = null;
    if (this.roslib) {
      this.connect(this.roslib, attempt);
      return;
    }
    (this.options.loadRoslib ?? loadRoslib)().then(
      (roslib) => {
        this.roslib = roslib;
        if (this.linkState === "connecting") this.connect(roslib, attempt);
      },
      (error: Error) => {
        if (this.linkState !== "connecting") return;
        this.lastReason = error.message;
        this.retryLater(error.message);
      },
    );
  }

  private connect(roslib: RosLib, attempt: number): void {
    let ros: Ros | null = null;
    const transportFactory = async (url: string): Promise<ITransport> => {
      const transport = await roslib.WebSocketTransportFactory(url);
      if (this.ros !== ros) transport.close();
      transport.on("message", (message: RosbridgeMessage) => this.inspect(message));
      return transport;
    };
    ros = new roslib.Ros({ transportFactory });
    const current = ros;
    this.ros = current;
    this.connectTimer = setTimeout(() => this.lost(current, `no connection within ${this.options.connectTimeoutMs} ms`), this.options.connectTimeoutMs);
    current.on("connection", () => {
      if (this.ros !== current || this.linkState !== "connecting") return;
      if (this.connectTimer) clearTimeout(this.connectTimer);
      this.connectTimer = null;
      this.setState("connected");
      if (this.everConnected) this.stats.reconnects++;
      this.everConnected = true;
      for (const sub of this.subscriptions) this.openSubscription(current, sub);
      for (const topic of this.publishers.keys()) this.openPublisher(current, topic);
      this.options.onEvent?.({ kind: "connected", attempt });
    });
    current.on("close", () => this.lost(current, "connection closed"));
    current.on("error", (event: unknown) => {
      if (this.ros !== current) return;
      // roslib reports undecodable frames as Error objects; socket failures arrive as Event objects.
      if (event instanceof Error) this.malformed(`undecodable frame: ${event.message}`);
      else this.socketError = describeSocketError(event);
    });
    current.connect(this.options.url).catch((error: unknown) => this.lost(current, `cannot open ${this.options.url}: ${String(error)}`));
  }

  /** The connection behind `ros` is gone: fail what waits on it and schedule the next attempt. */
  private lost(ros: Ros, reason: string): void {
    if (this.ros !== ros || this.linkState === "closed") return;
    this.lastReason = this.socketError ?? reason;
    this.clearTimers();
    this.dropRos(new RosBusError("disconnected", `rosbridge at ${this.options.url} disconnected (${reason}) before answering`));
    this.retryLater(reason);
  }

  /** Backs off and schedules the next attempt. */
  private retryLater(reason: string): void {
    this.setState("backoff");
    this.options.onEvent?.({ kind: "disconnected", reason });
    const delayMs = this.backoff.nextDelayMs();
    this.options.onEvent?.({ kind: "backoff", delayMs, attempt: this.stats.connectAttempts + 1 });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.linkState === "backoff") this.attempt();
    }, delayMs);
  }

  private dropRos(error: Error): void {
    const ros = this.ros;
    this.ros = null;
    for (const publisher of this.publishers.values()) publisher.topic = null;
    for (const fail of [...this.pending]) fail(error);
    ros?.close();
  }

  private clearTimers(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.connectTimer) clearTimeout(this.connectTimer);
    this.retryTimer = null;
    this.connectTimer = null;
  }

  private openSubscription(ros: Ros, sub: Subscription): void {
    const topic = new this.roslib!.Topic<unknown>({
      ros, name: sub.topic, messageType: sub.type, throttle_rate: sub.throttleRateMs, queue_length: sub.queueLength, reconnect_on_close: false,
    });
    topic.subscribe((msg) => {
      if (this.ros === ros) sub.handler(msg);
    });
  }

  private openPublisher(ros: Ros, name: string): void {
    const publisher = this.publishers.get(name);
    if (!publisher) return;
    const topic = new this.roslib!.Topic<unknown>({ ros, name, messageType: publisher.type, reconnect_on_close: false });
    topic.advertise();
    publisher.topic = topic;
  }

  /** Sees every decoded message before roslib routes it: counts unknown ops and records status errors. */
  private inspect(message: RosbridgeMessage): void {
    const op = (message as { op: string }).op;
    if (!SERVER_OPS.has(op)) {
      this.malformed(`unknown op ${JSON.stringify(op)}`);
      return;
    }
    if (op === "status") {
      const status = message as { level?: unknown; msg?: unknown; id?: unknown };
      const level = String(status.level);
      if (level === "error") this.stats.statusErrors++;
      this.options.onEvent?.({ kind: "status", level, msg: String(status.msg), id: typeof status.id === "string" ? status.id : undefined });
    } else if (op === "publish" && typeof (message as { topic?: unknown }).topic !== "string") {
      this.malformed(`publish without a topic: ${JSON.stringify(message).slice(0, 200)}`);
    }
  }
}

function describeSocketError(event: unknown): string {
  const message = (event as { message?: unknown; error?: { message?: unknown } } | null)?.message ?? (event as { error?: { message?: unknown } } | null)?.error?.message;
  return `socket error: ${typeof message === "string" && message !== "" ? message : "unknown"}`;
}
