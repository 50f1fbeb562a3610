/**
 * What the coordinator's live-stream outputs (MJPEG over HTTP, WebRTC) read: per cell, its cameras'
 * frames and its live state, fed by the cell over its CellLink stream only while someone watches.
 *
 * A watcher subscribes and gets a function to unsubscribe. The hub asks the cell for frames when a
 * camera gains its first watcher and tells it to stop when the last one leaves; frames are delivered
 * to every watcher of that camera as they arrive (a slow watcher drops frames on its own side: see
 * `LatestFrameQueue`). State events (joint positions at a bounded rate, episode start and end,
 * outcome, e-stop) go to every state watcher of the cell.
 */

export interface CameraInfo {
  name: string;
  width: number;
  height: number;
  rateHz: number;
}

export interface StreamFrame {
  cellId: string;
  camera: string;
  width: number;
  height: number;
  jpeg: Uint8Array;
  /** Wall-clock ms (Unix epoch) when the cell rendered or captured the frame; for latency figures. */
  capturedAtMs: number;
  /** Frame number of this camera on the cell, increasing. */
  seq: number;
}

/** Live state on the data channel and in the descriptor, as JSON. */
export type CellStateEvent =
  | { type: "joints"; t_ms: number; names: string[]; position_rad: number[] }
  | { type: "episode_started"; t_ms: number; run_id: string; episode_id: string; index: number }
  | { type: "episode_finished"; t_ms: number; run_id: string; episode_id: string; index: number; outcome: string }
  | { type: "estop"; t_ms: number; detail: string }
  | { type: "event"; t_ms: number; name: string; detail: string };

export interface CellStreamHub {
  /** The cameras a connected cell has; [] when the cell is not connected. */
  cameras(cellId: string): CameraInfo[];
  /** Calls `onFrame` for each frame of the camera until the returned function is called. */
  watchCamera(cellId: string, camera: string, onFrame: (frame: StreamFrame) => void): () => void;
  /** Calls `onState` for each live state event of the cell until the returned function is called. */
  watchState(cellId: string, onState: (event: CellStateEvent) => void): () => void;
}
