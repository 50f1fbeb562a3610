/**
 * The simulated judge: a success classifier for the simulated fleet that speaks the judge wire
 * (docs/judges.md) over real HTTP on loopback. It does not look at the frames (it checks only that
 * the request carries them); it answers from the simulated world's own judgement of the cell's
 * latest episode (`groundTruth`, the fleet launcher's GET /ground-truth of the sim cell), wrong with
 * probability `errorRate`, as SimOperator's labels are. Confidence: uniform in [0.75, 1) when right,
 * in [0.5, 0.8) when wrong (a judge is less sure when it errs), so a run's confidence threshold sends
 * some of its mistakes to a person. A pre-flight (`preflight: true`) is answered without asking the world.
 *
 * Draws are seeded per cell and per request of that cell (a cell asks about one episode at a time),
 * so a run is reproducible whatever the timing. `failNext(n)` makes the next n answers HTTP 503 (a
 * judge failing mid-run, for tests).
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SimRandom } from "../world/rng.js";

export interface SimJudgeOptions {
  seed: number;
  /** Share of verdicts that are wrong, 0..1 (default 0). */
  errorRate?: number;
  /** The simulated world's judgement of the cell's latest episode (the fleet launcher's groundTruth). */
  groundTruth: (cellId: string) => Promise<{ success: boolean; progress: number }>;
  /** Loopback port (default 0: any free port). */
  port?: number;
  log?: (line: string) => void;
}

export interface CompiledSimJudgeOptions extends Required<SimJudgeOptions> {}

export function compileSimJudgeOptions(options: SimJudgeOptions): CompiledSimJudgeOptions {
  const known = new Set(["seed", "errorRate", "groundTruth", "port", "log"]);
  for (const key of Object.keys(options)) if (!known.has(key)) throw new Error(`unknown simulated judge option "${key}"; known: ${[...known].join(", ")}`);
  const errorRate = options.errorRate ?? 0;
  if (!(errorRate >= 0 && errorRate <= 1)) throw new Error(`simulated judge errorRate must be a share from 0 to 1; got ${JSON.stringify(options.errorRate)}`);
  if (!Number.isInteger(options.seed)) throw new Error(`simulated judge seed must be an integer; got ${JSON.stringify(options.seed)}`);
  const port = options.port ?? 0;
  if (!(Number.isInteger(port) && port >= 0 && port <= 65535)) throw new Error(`simulated judge port must be 0..65535; got ${JSON.stringify(options.port)}`);
  return { seed: options.seed, errorRate, groundTruth: options.groundTruth, port, log: options.log ?? (() => undefined) };
}

/** One verdict the simulated judge gave, with the world's truth beside it. */
export interface SimJudgeVerdict {
  cell: string;
  truth: boolean;
  success: boolean;
  confidence: number;
}

/** Bytes of a request body the simulated judge reads, at most (frames of up to eight cameras). */
const MAX_REQUEST_BYTES = 40 * 1024 * 1024;

export class SimJudge {
  private readonly o: CompiledSimJudgeOptions;
  private server: Server | undefined;
  private readonly asked = new Map<string, number>();
  private failing = 0;
  /** Every verdict given (not pre-flights), in order. */
  readonly verdicts: SimJudgeVerdict[] = [];
  failures = 0;

  constructor(options: SimJudgeOptions) {
    this.o = compileSimJudgeOptions(options);
  }

  /** Starts listening on 127.0.0.1; returns the URL to name as a run's `judge.url`. */
  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      void this.handle(req).then(({ status, body }) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once("error", reject);
      this.server!.listen(this.o.port, "127.0.0.1", () => resolve());
    });
    return this.url;
  }

  get url(): string {
    if (!this.server) throw new Error("the simulated judge is not started");
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/judge`;
  }

  /** The next `count` requests (pre-flights included) are answered HTTP 503. */
  failNext(count: number): void {
    this.failing = count;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server!.close(resolve));
    this.server = undefined;
  }

  private async handle(req: IncomingMessage): Promise<{ status: number; body: unknown }> {
    if (req.method !== "POST") return { status: 405, body: { error: "POST a judge request (docs/judges.md)" } };
    let text = "";
    let bytes = 0;
    for await (const chunk of req) {
      bytes += (chunk as Buffer).byteLength;
      if (bytes > MAX_REQUEST_BYTES) return { status: 413, body: { error: `request over ${MAX_REQUEST_BYTES} bytes` } };
      text += (chunk as Buffer).toString("utf8");
    }
    if (this.failing > 0) {
      this.failing--;
      this.failures++;
      return { status: 503, body: { error: "the simulated judge is failing on purpose" } };
    }
    let request: { cell?: unknown; preflight?: unknown; frames?: unknown };
    try {
      request = JSON.parse(text) as typeof request;
    } catch {
      return { status: 400, body: { error: "the request is not JSON" } };
    }
    if (!Array.isArray(request.frames) || request.frames.length === 0) return { status: 400, body: { error: "the request carries no frames" } };
    if (request.preflight === true) return { status: 200, body: { success: false, confidence: 1, reason: "pre-flight: the simulated judge is up" } };
    if (typeof request.cell !== "string" || request.cell === "") return { status: 400, body: { error: "the request names no cell" } };
    const cell = request.cell;
    const count = this.asked.get(cell) ?? 0;
    this.asked.set(cell, count + 1);
    const random = new SimRandom(this.o.seed, `judge/${cell}/${count}`);
    const wrong = random.uniform() < this.o.errorRate;
    const u = random.uniform();
    let truth: boolean;
    try {
      truth = (await this.o.groundTruth(cell)).success;
    } catch (error) {
      return { status: 500, body: { error: `the simulated world did not say: ${(error as Error).message}` } };
    }
    const success = wrong ? !truth : truth;
    const confidence = Math.round((wrong ? 0.5 + 0.3 * u : 0.75 + 0.25 * u) * 1000) / 1000;
    this.verdicts.push({ cell, truth, success, confidence });
    this.o.log(`simulated judge: ${cell} episode ${count + 1}: ${success ? "success" : "failure"} at confidence ${confidence}${wrong ? " (wrongly)" : ""}`);
    return { status: 200, body: { success, confidence, reason: wrong ? "simulated judge (wrong on purpose)" : "simulated judge" } };
  }
}
