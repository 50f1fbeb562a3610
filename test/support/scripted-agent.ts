/**
 * A scripted cell agent: real CellLink calls over gRPC (the generated client), awaitable incoming
 * messages, and helpers that play an episode the way the real agent reports it. It replaces the
 * cell (the device), never the coordinator under test.
 *
 * Two levels: `open(first)` / `send(message)` put exactly the given messages on the Connect stream
 * (for protocol tests that choose every seq); `connect()` / `sendSequenced()` / `play()` say Hello,
 * number messages and wait for Acks like a well-behaved agent (for tests about what the coordinator
 * does with the reports).
 */
import { credentials, Metadata, type ChannelOptions, type ClientDuplexStream, type ServiceError } from "@grpc/grpc-js";
import {
  CellLinkClient, type AgentMessage, type ArtifactChunk, type ArtifactProgress, type ArtifactRef, type AssignEpisode, type CoordinatorMessage, type Hello,
} from "../../protocol/gen/cell.js";

export class ScriptedAgent {
  readonly client: CellLinkClient;
  private stream?: ClientDuplexStream<AgentMessage, CoordinatorMessage>;
  private readonly inbox: CoordinatorMessage[] = [];
  private readonly waiters: Array<() => void> = [];
  private seq = 0;
  /** Settles when the current stream ends: with the error that ended it, or null. */
  ended?: Promise<ServiceError | null>;

  /**
   * `cellId` is what `connect()` says in its Hello; `open()` sends whatever it is given.
   * `channelOptions` go to the gRPC client, e.g. `{ "grpc.use_local_subchannel_pool": 1 }` for a
   * connection of its own like a real cell's (by default agents dialling one address share one).
   */
  constructor(address: string, private readonly token: string, readonly cellId = "", channelOptions: ChannelOptions = {}) {
    this.client = new CellLinkClient(address, credentials.createInsecure(), channelOptions);
  }

  metadata(): Metadata {
    const metadata = new Metadata();
    metadata.set("authorization", `Bearer ${this.token}`);
    return metadata;
  }

  /** Opens a Connect stream (dropping any unread messages of an earlier one) and writes `first`, if given. */
  open(first?: AgentMessage): void {
    const stream = this.client.connect(this.metadata());
    this.stream = stream;
    this.inbox.length = 0;
    stream.on("data", (message: CoordinatorMessage) => {
      this.inbox.push(message);
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.ended = new Promise((resolve) => {
      stream.on("error", (error: ServiceError) => resolve(error));
      stream.on("end", () => resolve(null));
    });
    if (first) stream.write(first);
  }

  /** Connects and says Hello as an so101@3.11 cell in tabletop@1 (the installation of so101-b/c/d), then waits for Welcome. */
  async connect(extra: Partial<Hello> = {}): Promise<void> {
    if (!this.cellId) throw new Error("connect() says Hello with the agent's cellId; construct the ScriptedAgent with one");
    this.open({
      seq: 0,
      hello: {
        cellId: this.cellId, agentVersion: "scripted", robotModel: "so101", firmware: "3.11", environment: "tabletop@1",
        // What a tabletop@1 cell's agent reports (the scheduler gives a cell only episodes it can score).
        instruments: ["joint_states", "camera:top", "camera:wrist", "gripper_state", "ft_wrist", "mocap", "estop"].map((k) => {
          const [kind, name = ""] = k.split(":");
          return { kind, name, rateHz: kind === "camera" ? 30 : 0, width: 0, height: 0 };
        }),
        policyImages: ["assay/ref-policy:expert"], lastSeqSent: 0, interruptedEpisodeId: "", safetyState: "ok", ...extra,
      },
    });
    await this.next((m) => m.welcome);
  }

  /** Writes one message as given (seq 0 unless it says otherwise). */
  send(message: Partial<AgentMessage>): void {
    this.stream!.write({ seq: 0, ...message });
  }

  /** Resolves with (and consumes) the first message `pick` accepts. */
  async next<T>(pick: (message: CoordinatorMessage) => T | undefined): Promise<T> {
    for (;;) {
      for (let i = 0; i < this.inbox.length; i++) {
        const picked = pick(this.inbox[i]);
        if (picked !== undefined) {
          this.inbox.splice(i, 1);
          return picked;
        }
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Sends a message with the next seq of this agent's own count and waits for its Ack. */
  async sendSequenced(body: Omit<AgentMessage, "seq">): Promise<void> {
    const seq = ++this.seq;
    this.stream!.write({ ...body, seq } as AgentMessage);
    await this.next((m) => (m.ack?.seq === seq ? m.ack : undefined));
  }

  async started(assign: AssignEpisode): Promise<void> {
    await this.sendSequenced({ episodeStarted: { episodeId: assign.episodeId, attempt: assign.attempt, startedAtMs: Date.now() } });
  }

  /** Reports the episode finished (no recordings), `durationS` + `resetS` of robot time. */
  async finished(assign: AssignEpisode, outcome: "success" | "failure", durationS = 20, resetS = 4): Promise<void> {
    await this.sendSequenced({
      episodeFinished: {
        episodeId: assign.episodeId, attempt: assign.attempt, outcome, failureCluster: outcome === "failure" ? "grasp_slip" : "",
        durationS, resetS, replaySpecJson: JSON.stringify({ environment: "tabletop@1", layout_seed: assign.index }), metaJson: "{}",
        artifacts: [], evaluationJson: "{}", finishedAtMs: Date.now(),
      },
    });
  }

  /** Takes the next assignment, starts it and finishes it with `outcome`. */
  async play(outcome: "success" | "failure"): Promise<AssignEpisode> {
    const assign = await this.next((m) => m.assignEpisode);
    await this.started(assign);
    await this.finished(assign, outcome);
    return assign;
  }

  /** Messages received and not consumed yet. */
  pending(): CoordinatorMessage[] {
    return [...this.inbox];
  }

  /** Cancels the stream (the cable pulled); the client stays usable for `open()`. */
  disconnect(): void {
    this.stream?.cancel();
  }

  artifactStatus(ref: ArtifactRef): Promise<ArtifactProgress> {
    return new Promise((resolve, reject) => this.client.artifactStatus(ref, this.metadata(), (error, progress) => (error ? reject(error) : resolve(progress))));
  }

  upload(chunks: ArtifactChunk[]): Promise<ArtifactProgress> {
    return new Promise((resolve, reject) => {
      const call = this.client.uploadArtifact(this.metadata(), (error, progress) => (error ? reject(error) : resolve(progress)));
      for (const chunk of chunks) call.write(chunk);
      call.end();
    });
  }

  close(): void {
    this.stream?.cancel();
    this.client.close();
  }
}
