import { strict as assert } from "node:assert";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseCliArgs } from "../../cell-agent/cli.js";
import { formatVideoDevices, listVideoDevices, parseFfmpegFormats, parseV4l2CtlFormats } from "../../cell-agent/devices/camera/video-devices.js";

/** ffmpeg 4.1's `-f v4l2 -list_formats all` for a typical UVC webcam (libavdevice/v4l2.c list_formats/list_framesizes). */
const FFMPEG_LIST = [
  "[video4linux2,v4l2 @ 0x55d0c7a8e300] Compressed:       mjpeg :          Motion-JPEG : 1280x720 640x480 320x240",
  "[video4linux2,v4l2 @ 0x55d0c7a8e300] Raw       :     yuyv422 :           YUYV 4:2:2 : 640x480 320x240",
  "[video4linux2,v4l2 @ 0x55d0c7a8e300] Raw       :     yuv420p :     Planar YUV 4:2:0 : Emulated : {32-1920, 2}x{32-1080, 2}",
  "/dev/video0: Immediate exit requested",
].join("\n");

/** v4l2-ctl --list-formats-ext for the same camera. */
const V4L2_CTL = `ioctl: VIDIOC_ENUM_FMT
	Type: Video Capture

	[0]: 'MJPG' (Motion-JPEG, compressed)
		Size: Discrete 1280x720
			Interval: Discrete 0.033s (30.000 fps)
			Interval: Discrete 0.067s (15.000 fps)
		Size: Discrete 640x480
			Interval: Discrete 0.033s (30.000 fps)
	[1]: 'YUYV' (YUYV 4:2:2)
		Size: Discrete 640x480
			Interval: Discrete 0.100s (10.000 fps)
`;

describe("cell-agent cameras", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "assay-video-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("reads formats and sizes from ffmpeg's listing, descriptions with colons and emulated formats included", () => {
    assert.deepEqual(parseFfmpegFormats(FFMPEG_LIST), [
      { format: "mjpeg", description: "Motion-JPEG", compressed: true, sizes: [{ size: "1280x720" }, { size: "640x480" }, { size: "320x240" }] },
      { format: "yuyv422", description: "YUYV 4:2:2", compressed: false, sizes: [{ size: "640x480" }, { size: "320x240" }] },
      { format: "yuv420p", description: "Planar YUV 4:2:0", compressed: false, sizes: [{ size: "{32-1920, 2}x{32-1080, 2}" }] },
    ]);
  });

  it("reads rates per size from v4l2-ctl, naming formats as ffmpeg's inputFormat does", () => {
    assert.deepEqual(parseV4l2CtlFormats(V4L2_CTL), [
      { format: "mjpeg", description: "Motion-JPEG", compressed: true, sizes: [{ size: "1280x720", ratesHz: [30, 15] }, { size: "640x480", ratesHz: [30] }] },
      { format: "yuyv422", description: "YUYV 4:2:2", compressed: false, sizes: [{ size: "640x480", ratesHz: [10] }] },
    ]);
  });

  it("lists every /dev/video* in number order with its card name, through ffmpeg when v4l2-ctl is missing, and says rates are not known", async () => {
    const dev = join(dir, "dev");
    const sys = join(dir, "sys");
    mkdirSync(dev);
    for (const node of ["video10", "video0", "video1", "ttyUSB0"]) writeFileSync(join(dev, node), "");
    mkdirSync(join(sys, "video0"), { recursive: true });
    writeFileSync(join(sys, "video0", "name"), "HD USB Camera: HD USB Camera\n");
    const asked: string[] = [];
    const devices = await listVideoDevices({
      devDir: dev, sysDir: sys, ffmpegPath: "ffmpeg",
      run: async (file, args) => {
        asked.push(`${file} ${args.at(-1)}`);
        if (file === "v4l2-ctl") throw Object.assign(new Error("spawn v4l2-ctl ENOENT"), { code: "ENOENT" });
        if (args.at(-1)!.endsWith("video0")) return { stdout: "", stderr: FFMPEG_LIST };
        if (args.at(-1)!.endsWith("video1")) return { stdout: "", stderr: "[video4linux2,v4l2 @ 0x1] Not a video capture device.\n" };
        return { stdout: "", stderr: `${args.at(-1)}: Permission denied\n` };
      },
    });
    assert.deepEqual(devices.map((d) => d.path), [join(dev, "video0"), join(dev, "video1"), join(dev, "video10")]);
    assert.deepEqual(asked, ["v4l2-ctl " + join(dev, "video0"), ...["video0", "video1", "video10"].map((n) => `ffmpeg ${join(dev, n)}`)], "v4l2-ctl is tried once, then ffmpeg for every device");
    const text = formatVideoDevices(devices, dev);
    assert.match(text, /video0 {2}\(HD USB Camera: HD USB Camera\)\n {2}inputFormat "mjpeg" {2}Motion-JPEG, compressed\n {4}1280x720\n/);
    assert.match(text, /video1\n {2}captures no video \(a UVC camera's metadata node/);
    assert.match(text, /video10\n {2}permission denied: add this user to the video group/);
    assert.match(text, /Frame rates are not listed: ffmpeg 4\.1 does not report them\. Install v4l-utils/);
  });

  it("shows rates when v4l2-ctl lists them", async () => {
    const dev = join(dir, "dev");
    mkdirSync(dev);
    writeFileSync(join(dev, "video0"), "");
    const devices = await listVideoDevices({ devDir: dev, sysDir: join(dir, "none"), run: async () => ({ stdout: V4L2_CTL, stderr: "" }) });
    const text = formatVideoDevices(devices, dev);
    assert.match(text, / {4}1280x720 {2}30, 15 frames\/s\n/);
    assert.doesNotMatch(text, /Frame rates are not listed/);
  });

  it("says plainly when the PC has no video device", async () => {
    const dev = join(dir, "dev");
    mkdirSync(dev);
    const devices = await listVideoDevices({ devDir: dev, run: async () => assert.fail("nothing to ask about") });
    assert.deepEqual(devices, []);
    assert.match(formatVideoDevices(devices, dev), /^This PC has no video devices \(nothing matches .*video\*\)\.\nPlug in a USB camera/);
  });

  it("is a CLI command that takes --json and needs no config", () => {
    assert.deepEqual(parseCliArgs(["cameras", "--json"]), { command: "cameras", configPath: "/etc/assay/cell-agent.json", json: true });
  });
});
