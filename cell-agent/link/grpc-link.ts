/**
 * The agent's end of CellLink: one Connect stream at a time, to one of the configured coordinators,
 * reconnected with backoff. On every connect: Hello (seq 0) → Welcome{last_seq_applied} → resend the
 * outbox's unacked messages after that seq, in order → live traffic and heartbeats. Acks trim the
 * outbox. The coordinators share one database, so whichever one welcomes the cell knows what the
 * others applied and the outbox replay is the same as after a reconnect to one coordinator.
 *
 * Failover (coordinator-rotation.ts): a failed dial or a broken stream moves to the next address;
 * a welcomed stream stays on its coordinator until it breaks. Every other call (uploads, LiveFeed,
 * FetchModel) goes through `client`, which is the current coordinator's.
 */
import { Metadata, credentials, status as GrpcStatus, type ClientDuplexStream, type ServiceError } from "@grpc/grpc-js";
import {
  CellLinkClient, type AgentMessage, type AssignEpisode, type CancelEpisode, type CoordinatorMessage, type Heartbeat, type Hello,
  type OperatorAnswer, type Refusal, type Watch, type Welcome,
} from "../../protocol/gen/cell.js";
import type { AgentConfig } from "../config.js";
import { Backoff } from "./backoff.js";
import { CoordinatorRotation } from "./coordinator-rotation.js";
import type { Outbox } from "./outbox.js";

export interface LinkHandlers {
  /** Builds the Hello for a new stream (seq 0 is set by the link). */
  hello(): Promise<Hello>;
  heartbeat(): Heartbeat;
  onWelcome(welcome: Welcome): void;
  onAck(seq: number): void;
  onAssign(assign: AssignEpisode): void;
  onCancel(cancel: CancelEpisode): void;
  onRefusal(refusal: Refusal): void;
  /** What the coordinator's viewers want from the cell's cameras and state now. */
  onWatch(watch: Watch): void;
  /** A person answered the cell's Attention at the operator station. */
  onOperatorAnswer(answer: OperatorAnswer): void;
  /** The stream ended (error, server close or stop()). */
  onDisconnected(reason: string): void;
}

/** A stream that does not get its Welcome in this time is abandoned and the next coordinator tried. */
const WELCOME_TIMEOUT_MS = 10_000;

function clientFor(address: string): CellLinkClient {
  return new CellLinkClient(address, credentials.createInsecure(), {
    "grpc.keepalive_time_ms": 10_000,
    "grpc.keepalive_timeout_ms": 5_000,
  });
}

export class GrpcLink {
  private channel: { address: string; client: CellLinkClient };
  private call: ClientDuplexStream<AgentMessage, CoordinatorMessage> | undefined;
  private welcomed = false;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private welcomeTimer: NodeJS.Timeout | undefined;
  private readonly rotation: CoordinatorRotation;

  constructor(
    private readonly config: AgentConfig,
    private readonly outbox: Outbox,
    private readonly handlers: LinkHandlers,
    private readonly log: (line: string) => void,
  ) {
    this.rotation = new CoordinatorRotation(config.coordinatorAddresses, new Backoff(config.reconnect));
    this.channel = { address: this.rotation.address, client: clientFor(this.rotation.address) };
  }

  /**
   * The client of the coordinator the link is on (or dialling). NOTE: read it for every call, never
   * keep it: after a failover it is another coordinator's, and the old one is closed.
   */
  get client(): CellLinkClient {
    return this.channel.client;
  }

  /** host:port of the coordinator that welcomed the current stream, or null while there is none. */
  get coordinator(): string | null {
    return this.welcomed ? this.channel.address : null;
  }

  /** Call metadata carrying the cell token; every RPC (Connect and uploads) uses it. */
  metadata(): Metadata {
    const metadata = new Metadata();
    metadata.set("authorization", `Bearer ${this.config.cellToken}`);
    return metadata;
  }

  /** True between Welcome and the end of the stream: sequenced messages go straight out. */
  get isWelcomed(): boolean {
    return this.welcomed;
  }

  start(): void {
    void this.connect();
  }

  /**
   * Sends an already-enqueued sequenced message now if the stream is up; otherwise the next
   * Welcome resends it from the outbox.
   */
  send(message: AgentMessage): void {
    if (this.welcomed && this.call) this.call.write(message);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    let hello: Hello;
    try {
      hello = await this.handlers.hello();
    } catch (error) {
      const delayMs = this.rotation.retryDelayMs();
      this.log(`could not build Hello (${(error as Error).message}); retrying in ${delayMs} ms`);
      this.reconnectIn(delayMs);
      return;
    }
    if (this.stopped) return;
    const address = this.rotation.address;
    if (this.channel.address !== address) {
      // Calls already under way on the old channel (an upload) finish or fail on their own.
      this.channel.client.close();
      this.channel = { address, client: clientFor(address) };
    }
    const call = this.channel.client.connect(this.metadata());
    this.call = call;
    let ended = false;
    const end = (reason: string, error?: ServiceError) => {
      if (ended) return;
      ended = true;
      const wasWelcomed = this.call === call && this.welcomed;
      this.teardown(call);
      this.handlers.onDisconnected(reason);
      if (this.stopped) return;
      const refused = error?.code === GrpcStatus.UNAUTHENTICATED;
      if (refused) this.log(`the coordinator refused this cell's token: ${error.details || error.message}`);
      const next = this.rotation.failed({ refused });
      const when = next.delayMs === 0 ? "now" : `in ${next.delayMs} ms`;
      const then = next.address === address ? `trying it again ${when}` : `trying ${next.address} ${when}`;
      const why = error ? error.details || error.message : reason;
      this.log(wasWelcomed ? `left coordinator ${address}: ${why}; ${then}` : `could not connect to coordinator ${address}: ${why}; ${then}`);
      this.reconnectIn(next.delayMs);
    };
    call.on("data", (message: CoordinatorMessage) => this.receive(call, message));
    call.on("error", (error: ServiceError) => end(this.stopped ? "stopped" : `link error: ${error.details || error.message}`, error));
    call.on("end", () => end(this.stopped ? "stopped" : "the coordinator closed the stream"));
    this.welcomeTimer = setTimeout(() => end(`no Welcome within ${WELCOME_TIMEOUT_MS} ms`), WELCOME_TIMEOUT_MS);
    call.write({ seq: 0, hello });
  }

  private receive(call: ClientDuplexStream<AgentMessage, CoordinatorMessage>, message: CoordinatorMessage): void {
    if (call !== this.call) return;
    if (message.welcome) {
      clearTimeout(this.welcomeTimer);
      this.rotation.welcomed();
      const of = this.rotation.size > 1 ? ` (${this.rotation.position} of ${this.rotation.size} in coordinatorAddresses)` : "";
      this.log(`connected to coordinator ${this.channel.address}${of}`);
      const welcome = message.welcome;
      this.outbox.ack(welcome.lastSeqApplied);
      for (const pending of this.outbox.pendingAfter(welcome.lastSeqApplied)) call.write(pending);
      this.welcomed = true;
      const everyMs = welcome.heartbeatIntervalMs > 0 ? welcome.heartbeatIntervalMs : this.config.heartbeatIntervalMs;
      clearInterval(this.heartbeatTimer);
      this.heartbeatTimer = setInterval(() => this.sendHeartbeat(), everyMs);
      this.handlers.onWelcome(welcome);
      this.sendHeartbeat();
    } else if (message.ack) {
      this.outbox.ack(message.ack.seq);
      this.handlers.onAck(message.ack.seq);
    } else if (message.assignEpisode) {
      this.handlers.onAssign(message.assignEpisode);
    } else if (message.cancelEpisode) {
      this.handlers.onCancel(message.cancelEpisode);
    } else if (message.refusal) {
      this.handlers.onRefusal(message.refusal);
    } else if (message.watch) {
      this.handlers.onWatch(message.watch);
    } else if (message.operatorAnswer) {
      this.handlers.onOperatorAnswer(message.operatorAnswer);
    }
  }

  /** Sends a heartbeat now (also sent every heartbeat interval once welcomed); nothing while not welcomed. */
  sendHeartbeat(): void {
    if (this.welcomed && this.call) this.call.write({ seq: 0, heartbeat: this.handlers.heartbeat() });
  }

  private teardown(call: ClientDuplexStream<AgentMessage, CoordinatorMessage>): void {
    if (this.call === call) {
      this.call = undefined;
      this.welcomed = false;
    }
    clearTimeout(this.welcomeTimer);
    clearInterval(this.heartbeatTimer);
    call.removeAllListeners("data");
    call.on("error", () => undefined);
    call.cancel();
  }

  private reconnectIn(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => void this.connect(), delayMs);
  }

  /** Closes the stream and the channel; no reconnect afterwards. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    if (this.call) {
      const call = this.call;
      this.teardown(call);
    }
    this.channel.client.close();
  }
}
