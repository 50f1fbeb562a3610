/**
 * A simulated camera. `capture()` freezes the scene at the current simulated instant; the frame's
 * `rgb` and `jpeg` are rendered and encoded on first access (and cached), so a consumer that
 * only looks at some frames only pays for those.
 */
import type { Camera, CameraCalibration, CameraFrame } from "../../cell-agent/hardware/types.js";
import { simCameraCalibration } from "../render/camera-calibration.js";
import { cameraSize, renderCamera, type RenderedImage } from "../render/cameras.js";
import { encodeJpeg } from "../render/jpeg-codec.js";
import type { SimWorld } from "../world/sim-world.js";

export const JPEG_QUALITY = 80;

export class SimCamera implements Camera {
  readonly calibration: CameraCalibration | undefined;

  constructor(private readonly world: SimWorld, readonly name: string, readonly rateHz = 30) {
    this.calibration = simCameraCalibration(name);
  }

  async capture(): Promise<CameraFrame> {
    const scene = this.world.snapshot();
    const name = this.name;
    const size = cameraSize(name);
    let image: RenderedImage | undefined;
    let jpeg: Uint8Array | undefined;
    const render = () => (image ??= renderCamera(scene, name));
    return {
      tNs: this.world.tNs,
      width: size.width,
      height: size.height,
      get rgb() {
        return render().rgb;
      },
      get jpeg() {
        const { rgb, width, height } = render();
        return (jpeg ??= encodeJpeg(rgb, width, height, JPEG_QUALITY));
      },
    };
  }
}
