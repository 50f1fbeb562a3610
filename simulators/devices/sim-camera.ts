/**
 * A simulated camera. `capture()` freezes the scene at the current simulated instant. What it
 * costs depends on whether the consumer looks at the frames:
 *
 * - While the consumer reads every frame (the agent's episode loop: the recorder stores each JPEG,
 *   the video takes the RGB), `capture()` renders the frame and encodes its JPEG ahead, with sharp
 *   on the thread pool, before it resolves.
 * - Once a frame goes unread by the next capture (a test or bench driving a policy that looks only
 *   now and then), frames are rendered and encoded only when read, synchronously (jpeg-js). The
 *   first read switches encoding ahead back on.
 *
 * Either way a frame's pixels are a function of the scene alone, and `rgb` and `jpeg` are cached.
 */
import type { Camera, CameraCalibration, CameraFrame } from "../../cell-agent/hardware/types.js";
import { simCameraCalibration } from "../render/camera-calibration.js";
import type { RenderedImage } from "../render/cameras.js";
import { encodeJpeg, encodeJpegSync } from "../render/jpeg-codec.js";
import { CameraRenderer } from "../render/rasterizer.js";
import type { SimWorld } from "../world/sim-world.js";

export const JPEG_QUALITY = 80;

export class SimCamera implements Camera {
  readonly calibration: CameraCalibration | undefined;
  private readonly renderer: CameraRenderer;
  private encodeAhead = true;
  private previousFrameRead: () => boolean = () => true;

  constructor(private readonly world: SimWorld, readonly name: string, readonly rateHz = 30) {
    this.calibration = simCameraCalibration(name);
    this.renderer = new CameraRenderer(name);
  }

  async capture(): Promise<CameraFrame> {
    if (!this.previousFrameRead()) this.encodeAhead = false;
    const scene = this.world.snapshot();
    const tNs = this.world.tNs;
    const renderer = this.renderer;
    let image: RenderedImage | undefined;
    let jpeg: Uint8Array | undefined;
    let read = false;
    const render = () => (image ??= renderer.render(scene));
    if (this.encodeAhead) {
      const { rgb, width, height } = render();
      jpeg = await encodeJpeg(rgb, width, height, JPEG_QUALITY);
    }
    this.previousFrameRead = () => read;
    const onRead = () => {
      read = true;
      this.encodeAhead = true;
    };
    return {
      tNs,
      width: renderer.width,
      height: renderer.height,
      get rgb() {
        onRead();
        return render().rgb;
      },
      get jpeg() {
        onRead();
        if (!jpeg) {
          const { rgb, width, height } = render();
          jpeg = encodeJpegSync(rgb, width, height, JPEG_QUALITY);
        }
        return jpeg;
      },
    };
  }
}
