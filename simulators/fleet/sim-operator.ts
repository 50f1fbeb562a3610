/**
 * The simulated operator: the person beside the simulated cells in operator reset mode, who uses the
 * coordinator's operator station API exactly as the station's buttons do. It watches GET /v1/cells;
 * when a cell waits for a reset it "sets the scene" for a seeded delay and then confirms with
 * POST /v1/cells/{cell}/scene-ready. With probability `errorRate` it sets the scene wrong (the cell's
 * simulated world places the objects off target) and, once that episode has finished, notices and
 * marks it invalid with POST /v1/cells/{cell}/invalidate-previous (reason scene_wrong). If the run
 * ended first (it was the run's last episode) the invalidation is refused (a result is final) and
 * the operator logs it.
 *
 * Labels: when a cell waits for a success label (a task with operator.success) the operator "looks"
 * for the same seeded delay, reads the simulated world's own judgement (`groundTruth`, the sim cell's
 * GET /ground-truth) and labels it with POST /v1/cells/{cell}/label: success as the world saw it, except
 * with probability `errorRate` the opposite; progress the world's, moved 10 points the other way on
 * a wrong label; a short note.
 *
 * Interventions: when a cell asks for help with a paused episode (attention "intervene", a run with
 * `interventions` on_stall or scripted) the operator walks over for the same kind of seeded delay and
 * presses Intervene (POST /v1/cells/{cell}/intervene), helps for another seeded delay and presses Done
 * (POST /v1/cells/{cell}/intervene-done); the simulated world then applies the help.
 *
 * Delays and errors are drawn per cell and episode attempt from `seed`, so a run is reproducible
 * whatever the polling order.
 */
import { SimRandom } from "../world/rng.js";

export interface SimOperatorOptions {
  /** The coordinator's public base URL (no /v1). */
  baseUrl: string;
  /** A keys:admin key of the operator account (the station's key). */
  apiKey: string;
  seed: number;
  /** Wall milliseconds a scene takes the operator, uniform in [min, max] (default 500..2000). */
  delayMs?: { min: number; max: number };
  /** Share of scenes set wrong, 0..1 (default 0). */
  errorRate?: number;
  /** How often the operator looks at the fleet, ms (default 250). */
  pollMs?: number;
  /** Cells this operator tends (default every cell). */
  cells?: string[];
  /** Makes the cell's next confirmed scene wrong (the fleet launcher's misplaceNextScene). */
  setSceneWrong: (cellId: string) => Promise<void>;
  /** The simulated world's judgement of the cell's latest episode (the fleet launcher's groundTruth); without it, labels are left to a person. */
  groundTruth?: (cellId: string) => Promise<{ success: boolean; progress: number }>;
  /** Helps with interventions (Intervene, then Done) when a cell asks; default true. False leaves them to a person. */
  interventions?: boolean;
  /** Called once per label request the operator sees, with the cell's attention as the station API shows it (tests check what a person is told). */
  onLabelRequest?: (cellId: string, attention: Record<string, unknown>) => void;
  log?: (line: string) => void;
}

export interface CompiledSimOperatorOptions extends Required<Omit<SimOperatorOptions, "cells" | "groundTruth">> {
  cells: string[] | null;
  groundTruth: SimOperatorOptions["groundTruth"] | null;
}

export function compileSimOperatorOptions(options: SimOperatorOptions): CompiledSimOperatorOptions {
  const known = new Set(["baseUrl", "apiKey", "seed", "delayMs", "errorRate", "pollMs", "cells", "setSceneWrong", "groundTruth", "interventions", "onLabelRequest", "log"]);
  for (const key of Object.keys(options)) if (!known.has(key)) throw new Error(`unknown simulated operator option "${key}"; known: ${[...known].join(", ")}`);
  const delayMs = options.delayMs ?? { min: 500, max: 2000 };
  if (!(delayMs.min >= 0 && delayMs.max >= delayMs.min)) throw new Error(`simulated operator delayMs must be {min >= 0, max >= min}; got ${JSON.stringify(delayMs)}`);
  const errorRate = options.errorRate ?? 0;
  if (!(errorRate >= 0 && errorRate <= 1)) throw new Error(`simulated operator errorRate must be a share from 0 to 1; got ${JSON.stringify(options.errorRate)}`);
  const pollMs = options.pollMs ?? 250;
  if (!(pollMs > 0)) throw new Error(`simulated operator pollMs must be a positive number; got ${JSON.stringify(options.pollMs)}`);
  if (!Number.isInteger(options.seed)) throw new Error(`simulated operator seed must be an integer; got ${JSON.stringify(options.seed)}`);
  return {
    baseUrl: options.baseUrl.replace(/\/+$/, ""), apiKey: options.apiKey, seed: options.seed, delayMs, errorRate, pollMs,
    cells: options.cells ?? null, setSceneWrong: options.setSceneWrong, groundTruth: options.groundTruth ?? null,
    interventions: options.interventions ?? true, onLabelRequest: options.onLabelRequest ?? (() => undefined), log: options.log ?? (() => undefined),
  };
}

/** What the operator has done so far. */
export interface SimOperatorTally {
  confirmed: number;
  setWrong: number;
  invalidated: number;
  /** Invalidations refused because the run had ended. */
  tooLate: number;
  /** Episodes labelled, and of them labelled against the world's truth. */
  labelled: number;
  mislabelled: number;
  /** Interventions helped with (Intervene, then Done). */
  intervened: number;
}

interface CellJson {
  id: string;
  attention: { kind: string; episode_id: string; since: string; scene?: { phase?: string } } | null;
}

export class SimOperator {
  private readonly o: CompiledSimOperatorOptions;
  private readonly handled = new Set<string>();
  /** Cell -> episode whose scene was set wrong, to mark invalid once it has finished. */
  private readonly wrong = new Map<string, string>();
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  readonly tally: SimOperatorTally = { confirmed: 0, setWrong: 0, invalidated: 0, tooLate: 0, labelled: 0, mislabelled: 0, intervened: 0 };

  constructor(options: SimOperatorOptions) {
    this.o = compileSimOperatorOptions(options);
  }

  start(): void {
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.all([...this.inFlight]);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.track(this.look()).finally(() => this.schedule()), this.o.pollMs);
  }

  private track(work: Promise<void>): Promise<void> {
    const tracked = work.catch((error: Error) => this.o.log(`simulated operator: ${error.message}`)).finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
    return tracked;
  }

  private async api(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
    const response = await fetch(`${this.o.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.o.apiKey}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json().catch(() => ({}))) as Record<string, unknown> };
  }

  private async look(): Promise<void> {
    const { status, json } = await this.api("GET", "/v1/cells");
    if (status !== 200) throw new Error(`GET /v1/cells answered ${status}: ${JSON.stringify(json.error ?? json)}`);
    for (const cell of json.data as CellJson[]) {
      if (this.o.cells && !this.o.cells.includes(cell.id)) continue;
      const attention = cell.attention;
      if (attention?.kind === "reset") {
        const key = `${cell.id}/${attention.episode_id}/${attention.since}`;
        if (!this.handled.has(key)) {
          this.handled.add(key);
          void this.track(this.setScene(cell.id, attention.episode_id, attention.since));
        }
      }
      if (attention?.kind === "label" && this.o.groundTruth) {
        const key = `${cell.id}/${attention.episode_id}/${attention.since}/label`;
        if (!this.handled.has(key)) {
          this.handled.add(key);
          this.o.onLabelRequest(cell.id, attention);
          void this.track(this.label(cell.id, attention.episode_id, attention.since));
        }
      }
      if (attention?.kind === "intervene" && attention.scene?.phase === "offered" && this.o.interventions) {
        const key = `${cell.id}/${attention.episode_id}/${attention.since}/intervene`;
        if (!this.handled.has(key)) {
          this.handled.add(key);
          void this.track(this.intervene(cell.id, attention.episode_id, attention.since));
        }
      }
      const wrong = this.wrong.get(cell.id);
      if (wrong) await this.noticeWrong(cell.id, wrong);
    }
  }

  /** Sets the scene (the seeded delay), maybe wrongly, then confirms it through the station API. */
  private async setScene(cellId: string, episodeId: string, since: string): Promise<void> {
    const random = new SimRandom(this.o.seed, `operator/${cellId}/${episodeId}/${since}`);
    const delayMs = this.o.delayMs.min + random.uniform() * (this.o.delayMs.max - this.o.delayMs.min);
    const setWrong = random.uniform() < this.o.errorRate;
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (this.stopped) return;
    if (setWrong) await this.o.setSceneWrong(cellId);
    const { status, json } = await this.api("POST", `/v1/cells/${encodeURIComponent(cellId)}/scene-ready`, { episode_id: episodeId });
    if (status !== 200) {
      this.o.log(`simulated operator: scene-ready for ${cellId} episode ${episodeId} answered ${status}: ${JSON.stringify(json.error ?? json)}`);
      return;
    }
    this.tally.confirmed += 1;
    if (setWrong) {
      this.tally.setWrong += 1;
      this.wrong.set(cellId, episodeId);
      this.o.log(`simulated operator: set the scene of ${cellId} episode ${episodeId} wrong (confirmed after ${Math.round(delayMs)} ms)`);
    } else {
      this.o.log(`simulated operator: confirmed the scene of ${cellId} episode ${episodeId} after ${Math.round(delayMs)} ms`);
    }
  }

  /** Judges the finished episode (the seeded delay), maybe wrongly, then labels it through the station API. */
  private async label(cellId: string, episodeId: string, since: string): Promise<void> {
    const random = new SimRandom(this.o.seed, `operator/label/${cellId}/${episodeId}/${since}`);
    const delayMs = this.o.delayMs.min + random.uniform() * (this.o.delayMs.max - this.o.delayMs.min);
    const wrong = random.uniform() < this.o.errorRate;
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (this.stopped) return;
    const truth = await this.o.groundTruth!(cellId);
    const success = wrong ? !truth.success : truth.success;
    const progress = wrong ? Math.min(100, Math.max(0, truth.progress + (truth.success ? -10 : 10))) : truth.progress;
    const { status, json } = await this.api("POST", `/v1/cells/${encodeURIComponent(cellId)}/label`, {
      episode_id: episodeId, success, progress, note: "simulated operator",
    });
    if (status !== 200) {
      this.o.log(`simulated operator: label for ${cellId} episode ${episodeId} answered ${status}: ${JSON.stringify(json.error ?? json)}`);
      return;
    }
    this.tally.labelled += 1;
    if (wrong) this.tally.mislabelled += 1;
    this.o.log(`simulated operator: labelled ${cellId} episode ${episodeId} ${success ? "success" : "failure"}, progress ${progress}${wrong ? " (wrongly)" : ""} after ${Math.round(delayMs)} ms`);
  }

  /** Walks over (the seeded delay), presses Intervene, helps (another delay) and presses Done, through the station API. */
  private async intervene(cellId: string, episodeId: string, since: string): Promise<void> {
    const random = new SimRandom(this.o.seed, `operator/intervene/${cellId}/${episodeId}/${since}`);
    const delay = () => this.o.delayMs.min + random.uniform() * (this.o.delayMs.max - this.o.delayMs.min);
    const walkMs = delay();
    const helpMs = delay();
    await new Promise((resolve) => setTimeout(resolve, walkMs));
    if (this.stopped) return;
    const cell = `/v1/cells/${encodeURIComponent(cellId)}`;
    const pressed = await this.api("POST", `${cell}/intervene`, { episode_id: episodeId });
    if (pressed.status !== 200) {
      this.o.log(`simulated operator: intervene for ${cellId} episode ${episodeId} answered ${pressed.status}: ${JSON.stringify(pressed.json.error ?? pressed.json)}`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, helpMs));
    // Done is accepted once the cell reports the arm held (its attention's phase "holding"), as the station's button appears then.
    for (let seen = false; !seen;) {
      const now = await this.api("GET", cell);
      const attention = now.json.attention as CellJson["attention"] | undefined;
      if (attention?.kind !== "intervene" || attention.episode_id !== episodeId || attention.since !== since) {
        this.o.log(`simulated operator: ${cellId} episode ${episodeId} no longer waits for help; no Done sent`);
        return;
      }
      seen = attention.scene?.phase === "holding";
      if (!seen) await new Promise((resolve) => setTimeout(resolve, this.o.pollMs));
    }
    // Done goes out even when stopping: the cell holds its arm until then.
    const done = await this.api("POST", `${cell}/intervene-done`, { episode_id: episodeId, note: "simulated operator" });
    if (done.status !== 200) {
      this.o.log(`simulated operator: intervene-done for ${cellId} episode ${episodeId} answered ${done.status}: ${JSON.stringify(done.json.error ?? done.json)}`);
      return;
    }
    this.tally.intervened += 1;
    this.o.log(`simulated operator: helped ${cellId} episode ${episodeId} (came after ${Math.round(walkMs)} ms, done after ${Math.round(helpMs)} ms more)`);
  }

  /** Once the wrongly set episode is the cell's previous one (it finished), marks it invalid. */
  private async noticeWrong(cellId: string, episodeId: string): Promise<void> {
    const detail = await this.api("GET", `/v1/cells/${encodeURIComponent(cellId)}`);
    const previous = detail.json.previous_episode as { id: string } | null | undefined;
    if (previous?.id !== episodeId) return;
    this.wrong.delete(cellId);
    const { status, json } = await this.api("POST", `/v1/cells/${encodeURIComponent(cellId)}/invalidate-previous`, {
      reason: "scene_wrong", note: "simulated operator: the objects were set off their targets", episode_id: episodeId,
    });
    if (status === 200) {
      this.tally.invalidated += 1;
      this.o.log(`simulated operator: marked ${cellId} episode ${episodeId} invalid (scene_wrong); it runs again`);
    } else {
      this.tally.tooLate += 1;
      this.o.log(`simulated operator: could not mark ${cellId} episode ${episodeId} invalid (${status}): ${JSON.stringify((json.error as { message?: string })?.message ?? json)}`);
    }
  }
}
