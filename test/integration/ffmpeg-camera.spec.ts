/**
 * The V4L2 camera driver on ffmpeg's synthetic source: the same FfmpegCamera code a USB camera runs
 * (openCamera from the agent config), with only the ffmpeg input arguments differing.
 */
import { strict as assert } from "node:assert";
import { compileAgentConfig } from "../../cell-agent/config.js";
import { CaptureClock } from "../../cell-agent/devices/camera/capture-clock.js";
import { FfmpegCamera, parseShowinfoLine } from "../../cell-agent/devices/camera/ffmpeg-camera.js";
import { v4l2InputArgs } from "../../cell-agent/devices/camera/ffmpeg-input.js";
import { jpegSize } from "../../cell-agent/devices/camera/mjpeg-camera.js";
import { WallClock } from "../../cell-agent/devices/clock/wall-clock.js";
import { probeCamera } from "../../cell-agent/doctor/camera-probe.js";
import { openCamera } from "../../cell-agent/hardware-factory.js";

const required = { cellId: "so101-a", cellToken: "t", robotModel: "so101", environment: "tabletop@1", dataDir: "/tmp/x" };

describe("FfmpegCamera (V4L2 through ffmpeg, tested on testsrc2)", function () {
  this.timeout(20_000);
  const opened: Array<{ close(): void }> = [];
  afterEach(() => {
    for (const camera of opened.splice(0)) camera.close();
  });

  it("delivers JPEG frames of the configured size, stamped with the source's capture time mapped to the agent clock", async () => {
    const config = compileAgentConfig({ ...required, cameras: [{ name: "top", device: "testsrc2", width: 320, height: 240, rateHz: 30 }] });
    const camera = openCamera(config.cameras[0]!, new WallClock()) as FfmpegCamera;
    opened.push(camera);
    const first = await camera.capture();
    assert.deepEqual({ width: first.width, height: first.height }, { width: 320, height: 240 });
    assert.deepEqual(jpegSize(first.jpeg), { width: 320, height: 240 });
    assert.equal(first.jpeg[0], 0xff);
    assert.equal(first.jpeg[1], 0xd8);
    const frames = [first];
    for (let i = 0; i < 6; i++) frames.push(await camera.nextFrame(5000));
    for (let i = 1; i < frames.length; i++) {
      assert.ok(frames[i]!.tNs > frames[i - 1]!.tNs, "capture times increase");
      assert.ok(frames[i]!.tNs <= frames[i]!.receivedNs!, "a frame is never stamped after it arrived");
    }
    const clock = camera.timestampClock();
    assert.equal(clock?.kind, "device_offset", "testsrc2's pts start at 0, so they are offset onto the agent clock");
    assert.ok(camera.firstFrameLatencyMs()! > 0);
  });

  it("is measured by the doctor's probe: size, a rate near the configured one, first-frame and capture latency", async () => {
    const config = compileAgentConfig({ ...required, cameras: [{ name: "top", device: "testsrc2", width: 320, height: 240, rateHz: 30 }] });
    const found = await probeCamera(config.cameras[0]!, { sampleMs: 1000 });
    assert.deepEqual({ width: found.width, height: found.height }, { width: 320, height: 240 });
    // Paced by -re at 30 Hz; a loaded machine delivers fewer, never many more.
    assert.ok(found.measuredRateHz > 0 && found.measuredRateHz < 40, `rate ${found.measuredRateHz}`);
    assert.ok(found.firstFrameLatencyMs > 0);
    assert.ok(found.captureLatencyMs !== undefined && found.captureLatencyMs >= 0);
    assert.equal(found.clock?.kind, "device_offset");
  });

  it("says why when ffmpeg cannot open the device", async () => {
    const camera = new FfmpegCamera({ name: "wrist", rateHz: 30, source: "/dev/video-assay-none", inputArgs: v4l2InputArgs({ device: "/dev/video-assay-none", inputFormat: "mjpeg", width: 640, height: 480, frameRateHz: 30 }), firstFrameTimeoutMs: 3000 });
    opened.push(camera);
    await assert.rejects(camera.capture(), /camera wrist \(\/dev\/video-assay-none\): no frame yet \(ffmpeg exited \(code 1\): .*video-assay-none/);
  });
});

describe("showinfo and the capture clock", () => {
  it("reads the frame number and pts of a showinfo line", () => {
    assert.deepEqual(
      parseShowinfoLine("[Parsed_showinfo_1 @ 0x2456acc0] n:   1 pts:  33333 pts_time:0.033333 pos:       -1 fmt:yuv420p sar:1/1 s:320x240 i:P iskey:1"),
      { n: 1, ptsUs: 33333n },
    );
    assert.equal(parseShowinfoLine("[Parsed_showinfo_1 @ 0x2456acc0] config in time_base: 1/1000000, frame_rate: 30/1"), undefined);
  });
  it("takes V4L2 monotonic stamps as they are and offsets any other clock, never past a frame's arrival", () => {
    const monotonic = new CaptureClock();
    assert.equal(monotonic.map(1_000_000_000_000n, 1_000_020_000_000n), 1_000_000_000_000n);
    assert.equal(monotonic.info()?.kind, "device_monotonic");
    const offset = new CaptureClock();
    assert.equal(offset.map(0n, 1_000_030_000_000n), 1_000_030_000_000n);
    assert.equal(offset.map(33_333_000n, 1_000_073_000_000n), 1_000_063_333_000n);
    // A frame that arrived sooner than the first one lowers the offset: the mapped time never follows the arrival.
    assert.equal(offset.map(66_666_000n, 1_000_086_666_000n), 1_000_086_666_000n);
    assert.equal(offset.info()?.kind, "device_offset");
    assert.equal(offset.info()?.offsetNs, 1_000_020_000_000n);
  });
});
