/**
 * A scripted cell agent for cross-process money and webhook tests: one real CellLink Connect
 * stream over gRPC (the generated client), awaitable incoming messages, and helpers that play an
 * episode the way the real agent reports it. It replaces the cell (the device), never the
 * coordinator under test.
 */
import { credentials, Metadata, type ClientDuplexStream } from "@grpc/grpc-js";
import { CellLinkClient, type AgentMessage, type AssignEpisode, type CoordinatorMessage } from "../../protocol/gen/cell.js";

export class ScriptedAgent {
  private readonly client: CellLinkClient;
  private stream?: ClientDuplexStream<AgentMessage, CoordinatorMessage>;
  private readonly inbox: CoordinatorMessage[] = [];
  private readonly waiters: Array<() => void> = [];
  private seq = 0;

  constructor(address: string, private readonly token: string, readonly cellId: string) {
    this.client = new CellLinkClient(address, credentials.createInsecure());
  }

  /** Connects and says Hello as an so101@3.11 cell in tabletop@1 (the installation of so101-b/c/d). */
  async connect(): Promise<void> {
    const metadata = new Metadata();
    metadata.set("authorization", `Bearer ${this.token}`);
    const stream = this.client.connect(metadata);
    this.stream = stream;
    stream.on("data", (message: CoordinatorMessage) => {
      this.inbox.push(message);
      for (const wake of this.waiters.splice(0)) wake();
    });
    stream.on("error", () => undefined);
    stream.write({
      seq: 0,
      hello: {
        cellId: this.cellId, agentVersion: "scripted", robotModel: "so101", firmware: "3.11", environment: "tabletop@1",
        instruments: [{ kind: "camera", name: "top", rateHz: 30 }, { kind: "camera", name: "wrist", rateHz: 30 }],
        policyImages: ["assay/ref-policy:expert"], lastSeqSent: 0, interruptedEpisodeId: "", safetyState: "ok",
      },
    });
    await this.next((m) => m.welcome);
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

  /** Sends a sequenced message and waits for its Ack. */
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

  close(): void {
    this.stream?.cancel();
    this.client.close();
  }
}
