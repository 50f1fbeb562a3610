/**
 * The coordinator's CellStreamHub: who watches which camera (and which cell's state), told to each
 * cell as a Watch on its Connect stream, and the frames and state its LiveFeed call brings back,
 * handed to the watchers. A cell that reconnects gets the current Watch again after its Welcome.
 * In memory only: watching is live, nothing here needs to survive a restart.
 */
import type { LiveMessage } from "../../protocol/gen/cell.js";
import type { CellRegistry } from "../cells/registry.js";
import type { CameraInfo, CellStateEvent, CellStreamHub, StreamFrame } from "./cell-stream-hub.js";

export const DEFAULT_MAX_FRAME_RATE_HZ = 15;

type FrameWatcher = (frame: StreamFrame) => void;
type StateWatcher = (event: CellStateEvent) => void;

export class LiveHub implements CellStreamHub {
  private readonly cameraWatchers = new Map<string, Map<string, Set<FrameWatcher>>>();
  private readonly stateWatchers = new Map<string, Set<StateWatcher>>();
  /** Last frame size seen per cell/camera: the Hello may not know a camera's size. */
  private readonly sizes = new Map<string, { width: number; height: number }>();

  constructor(private readonly registry: CellRegistry, private readonly maxFrameRateHz = DEFAULT_MAX_FRAME_RATE_HZ) {}

  cameras(cellId: string): CameraInfo[] {
    const hello = this.registry.session(cellId)?.hello;
    if (!hello) return [];
    return hello.instruments.filter((i) => i.kind === "camera").map((i) => {
      const seen = this.sizes.get(`${cellId}/${i.name}`);
      return { name: i.name, width: seen?.width ?? i.width, height: seen?.height ?? i.height, rateHz: i.rateHz };
    });
  }

  watchCamera(cellId: string, camera: string, onFrame: FrameWatcher): () => void {
    const byCamera = this.cameraWatchers.get(cellId) ?? new Map<string, Set<FrameWatcher>>();
    this.cameraWatchers.set(cellId, byCamera);
    const watchers = byCamera.get(camera) ?? new Set<FrameWatcher>();
    byCamera.set(camera, watchers);
    const first = watchers.size === 0;
    watchers.add(onFrame);
    if (first) this.tellCell(cellId);
    return () => {
      if (!watchers.delete(onFrame) || watchers.size > 0) return;
      byCamera.delete(camera);
      if (byCamera.size === 0) this.cameraWatchers.delete(cellId);
      this.tellCell(cellId);
    };
  }

  watchState(cellId: string, onState: StateWatcher): () => void {
    const watchers = this.stateWatchers.get(cellId) ?? new Set<StateWatcher>();
    this.stateWatchers.set(cellId, watchers);
    const first = watchers.size === 0;
    watchers.add(onState);
    if (first) this.tellCell(cellId);
    return () => {
      if (!watchers.delete(onState) || watchers.size > 0) return;
      this.stateWatchers.delete(cellId);
      this.tellCell(cellId);
    };
  }

  /** Viewers of a cell right now (camera and state subscriptions). */
  watchers(cellId: string): number {
    let count = this.stateWatchers.get(cellId)?.size ?? 0;
    for (const set of this.cameraWatchers.get(cellId)?.values() ?? []) count += set.size;
    return count;
  }

  /** After a cell's Welcome: it forgot what was watched when its previous stream went down. */
  resync(cellId: string): void {
    if (this.cameraWatchers.has(cellId) || this.stateWatchers.has(cellId)) this.tellCell(cellId);
  }

  /** One message of a cell's LiveFeed call. */
  receive(cellId: string, message: LiveMessage): void {
    if (message.frame) {
      const f = message.frame;
      this.sizes.set(`${cellId}/${f.camera}`, { width: f.width, height: f.height });
      const frame: StreamFrame = { cellId, camera: f.camera, width: f.width, height: f.height, jpeg: f.jpeg, capturedAtMs: f.capturedAtMs, seq: f.seq };
      for (const watcher of [...(this.cameraWatchers.get(cellId)?.get(f.camera) ?? [])]) watcher(frame);
    } else if (message.stateJson) {
      let event: CellStateEvent;
      try {
        event = JSON.parse(message.stateJson) as CellStateEvent;
      } catch {
        return; // a malformed state line is dropped, never passed on
      }
      for (const watcher of [...(this.stateWatchers.get(cellId) ?? [])]) watcher(event);
    }
  }

  private tellCell(cellId: string): void {
    const cameras = [...(this.cameraWatchers.get(cellId)?.keys() ?? [])].sort();
    // Not awaited: a local session is written at once, in call order. A relay to another coordinator
    // that fails leaves the cell streaming what it did; the viewer's next watch change tells it again.
    this.registry.sendToCell(cellId, { watch: { cameras, state: (this.stateWatchers.get(cellId)?.size ?? 0) > 0, maxFrameRateHz: this.maxFrameRateHz } }).catch(() => undefined);
  }
}
