/**
 * A simulated camera. `capture()` freezes the scene at the current simulated instant. What it
 * costs depends on whether the consumer looks at the frames:
 *
 * - While the consumer reads every frame (the agent's episode loop: the recorder stores each JPEG,
 *   the video is made from the JPEGs), `capture()` renders the frame into the camera's own reusable
 *   buffer and encodes its JPEG ahead, on the thread pool (libjpeg-turbo, jpeg-codec.ts), before it
 *   resolves. A new 640x480 buffer per frame would cost more in garbage collection than the drawing
 *   itself.
 * - Once a frame goes unread by the next capture (a test or bench driving a policy that looks only
 *   now and then), frames are rendered and encoded only when read, synchronously. The
 *   first read switches encoding ahead back on.
 *
 * A frame's `rgb`, when first read, is copied from the camera's buffer if that still holds the
 * frame's picture (no capture has drawn over it since), and otherwise rendered again into a buffer of
 * its own: a frame is a pure function of its scene, so either way it is the same picture as the
 * JPEG's. `rgb` and `jpeg` are cached. `rgbView()` lends the camera's buffer itself while it holds
 * the frame (the episode video converts it at once), and is `rgb` otherwise.
 */
import type { Camera, CameraCalibration, CameraClockInfo, CameraFrame } from "../../cell-agent/hardware/types.js";
import { simCameraCalibration } from "../render/camera-calibration.js";
import { encodeJpeg, encodeJpegSync, jpegScratchSize } from "../render/jpeg-codec.js";
import { CameraRenderer, type RenderScene } from "../render/rasterizer.js";
import type { SceneFaces } from "../render/scene-faces.js";
import { stampTimecode } from "../render/timecode.js";
import type { SimWorld } from "../world/sim-world.js";

export const JPEG_QUALITY = 80;

export class SimCamera implements Camera {
  readonly calibration: CameraCalibration | undefined;
  private readonly renderer: CameraRenderer;
  private readonly encodeBuffer: Uint8Array;
  /** The encoder's output space for `encodeBuffer`'s JPEG (its worst case, about a frame's size): allocated once, not per frame. */
  private readonly jpegScratch: Uint8Array;
  /** True while a JPEG is being encoded from `encodeBuffer` (a concurrent capture draws elsewhere). */
  private encoding = false;
  private encodeAhead = true;
  /** Counts pictures drawn into `encodeBuffer`; a frame keeps the count of its own to know whether the buffer still holds it. */
  private encodeBufferDrawings = 0;
  private previousFrameRead: () => boolean = () => true;

  /**
   * `timecode`: burn the capture's wall-clock millisecond into each frame (render/timecode.ts).
   * `sceneFaces`: shared by the cameras of one world, so the faces of a scene they all draw are built once (render/scene-faces.ts).
   */
  constructor(private readonly world: SimWorld, readonly name: string, readonly rateHz = 30, private readonly options: { timecode?: boolean; sceneFaces?: SceneFaces } = {}) {
    const { topCameraOffsetM, colourGain } = world.variation;
    this.calibration = simCameraCalibration(name, topCameraOffsetM);
    this.renderer = new CameraRenderer(name, { topMountOffsetM: topCameraOffsetM, colourGain, sceneFaces: options.sceneFaces });
    // The renderer's own buffer: a capture draws there in place (no copy of the frame).
    this.encodeBuffer = this.renderer.ownBuffer();
    this.jpegScratch = new Uint8Array(jpegScratchSize(this.renderer.width, this.renderer.height));
  }

  /** A frame is the world frozen at the simulated instant it was asked for: the agent's clock on a simulated cell. */
  timestampClock(): CameraClockInfo {
    return { kind: "simulation", description: "the simulated world's time when the frame was rendered, which is the agent's clock on a simulated cell" };
  }

  async capture(): Promise<CameraFrame> {
    if (!this.previousFrameRead()) this.encodeAhead = false;
    const scene = this.world.snapshot();
    const tNs = this.world.tNs;
    const stampMs = this.options.timecode ? Date.now() : undefined;
    const { renderer } = this;
    const { width, height } = renderer;
    let rgb: Uint8Array | undefined;
    let jpeg: Uint8Array | undefined;
    let read = false;
    const stamp = (image: Uint8Array) => {
      if (stampMs !== undefined) stampTimecode(image, width, height, stampMs);
      return image;
    };
    let drawing = -1;
    const renderOwn = () => (rgb ??= drawing === this.encodeBufferDrawings ? this.encodeBuffer.slice() : stamp(renderer.render(scene).rgb));
    if (this.encodeAhead) ({ jpeg, drawing } = await this.encodeAheadOf(scene, stamp));
    this.previousFrameRead = () => read;
    const onRead = () => {
      read = true;
      this.encodeAhead = true;
    };
    return {
      tNs,
      width,
      height,
      get rgb() {
        onRead();
        return renderOwn();
      },
      get jpeg() {
        onRead();
        return (jpeg ??= encodeJpegSync(renderOwn(), width, height, JPEG_QUALITY));
      },
      // The camera's buffer itself while it still holds this frame (no 900 KiB copy per frame for the episode video).
      rgbView: () => {
        onRead();
        return rgb ?? (drawing === this.encodeBufferDrawings ? this.encodeBuffer : renderOwn());
      },
    };
  }

  /** The scene's JPEG, and the count of `encodeBuffer`'s drawing that holds its picture (-1: drawn elsewhere). */
  private async encodeAheadOf(scene: RenderScene, stamp: (image: Uint8Array) => Uint8Array): Promise<{ jpeg: Uint8Array; drawing: number }> {
    const { width, height } = this.renderer;
    if (this.encoding) return { jpeg: await encodeJpeg(stamp(this.renderer.render(scene).rgb), width, height, JPEG_QUALITY), drawing: -1 };
    this.encoding = true;
    try {
      stamp(this.renderer.render(scene, this.encodeBuffer).rgb);
      const drawing = ++this.encodeBufferDrawings;
      return { jpeg: await encodeJpeg(this.encodeBuffer, width, height, JPEG_QUALITY, this.jpegScratch), drawing };
    } finally {
      this.encoding = false;
    }
  }
}
