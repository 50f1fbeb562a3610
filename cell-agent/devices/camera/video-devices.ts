/**
 * `cell-agent cameras`: the video devices this PC has (/dev/video*), each with the formats, sizes and
 * rates it offers, so a technician can fill in a camera's `device`, `inputFormat`, `width`, `height`
 * and `frameRateHz`.
 *
 * Formats and sizes come from ffmpeg (`-f v4l2 -list_formats all`). ffmpeg 4.1 does not list frame
 * rates, so when `v4l2-ctl` (v4l-utils) is on PATH its `--list-formats-ext` is read instead, which
 * has them; without it the listing says how to get them.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ffmpegInstaller from "@ffmpeg-installer/ffmpeg";

export interface VideoSize {
  /** "640x480", or ffmpeg's stepwise "{32-1920, 2}x{32-1080, 2}". */
  size: string;
  /** Frame rates offered at this size, frames per second; undefined when the lister does not tell. */
  ratesHz?: number[];
}

export interface VideoFormat {
  /** ffmpeg's name, as `inputFormat` takes it: "mjpeg", "yuyv422", ... */
  format: string;
  description: string;
  compressed: boolean;
  sizes: VideoSize[];
}

export interface VideoDevice {
  path: string;
  /** The driver's card name from sysfs, e.g. "HD USB Camera: HD USB Camera". */
  name?: string;
  /** Empty for a node that captures no video (UVC cameras add a metadata node beside the capture one). */
  formats: VideoFormat[];
  /** Why no formats were listed, in plain words. */
  problem?: string;
  /** Which tool listed it: rates are only known with "v4l2-ctl". */
  listedBy: "ffmpeg" | "v4l2-ctl";
}

export interface VideoDeviceListerOptions {
  devDir?: string;
  sysDir?: string;
  ffmpegPath?: string;
  /** Runs a program and gives back its stdout and stderr, even when it exits non-zero; rejects when it cannot start. */
  run?: (file: string, args: string[]) => Promise<{ stdout: string; stderr: string }>;
}

function runProgram(file: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: 10_000, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error && (error as NodeJS.ErrnoException).code === "ENOENT") reject(error);
      else resolve({ stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

const FFMPEG_FORMAT = /\]\s*(Raw|Compressed)\s*:\s*(\S+)\s*:(.*)$/;
const SIZE = /\d+x\d+|\{[^}]*\}x\{[^}]*\}/g;
const TRAILING_SIZES = /((?:\s+(?:\d+x\d+|\{[^}]*\}x\{[^}]*\}))*)\s*$/;

/**
 * The formats in ffmpeg's `-list_formats all` output (its stderr): lines such as
 * `[video4linux2,v4l2 @ 0x..] Raw       :     yuyv422 :           YUYV 4:2:2 : 640x480 1280x720`, the
 * description padded and possibly holding colons itself, " Emulated :" after it for libv4l formats.
 */
export function parseFfmpegFormats(stderr: string): VideoFormat[] {
  const formats: VideoFormat[] = [];
  for (const line of stderr.split("\n")) {
    const match = FFMPEG_FORMAT.exec(line);
    if (!match) continue;
    const rest = match[3]!;
    const trailing = TRAILING_SIZES.exec(rest)!;
    const sizes = (trailing[1]!.match(SIZE) ?? []).map((size) => ({ size }));
    const description = rest.slice(0, trailing.index).replace(/\s*:\s*$/, "").replace(/\s*:\s*Emulated$/, "").trim();
    formats.push({ format: match[2]!, description, compressed: match[1] === "Compressed", sizes });
  }
  return formats;
}

/** V4L2 fourcc codes to the names ffmpeg's `-input_format` takes. */
const FOURCC_TO_FFMPEG: Record<string, string> = {
  MJPG: "mjpeg", JPEG: "mjpeg", YUYV: "yuyv422", UYVY: "uyvy422", NV12: "nv12", YU12: "yuv420p", RGB3: "rgb24", BGR3: "bgr24", GREY: "gray", H264: "h264",
};

/** The formats in `v4l2-ctl --list-formats-ext` output, with their rates. */
export function parseV4l2CtlFormats(stdout: string): VideoFormat[] {
  const formats: VideoFormat[] = [];
  let size: VideoSize | undefined;
  for (const line of stdout.split("\n")) {
    const format = /^\s*\[\d+\]:\s*'(\S{1,4})\s*'\s*\((.*?)(, compressed)?\)\s*$/.exec(line);
    if (format) {
      const fourcc = format[1]!;
      formats.push({ format: FOURCC_TO_FFMPEG[fourcc] ?? fourcc.toLowerCase(), description: format[2]!, compressed: Boolean(format[3]), sizes: [] });
      size = undefined;
      continue;
    }
    const sizeMatch = /^\s*Size:\s*\w+\s+(\d+x\d+)/.exec(line);
    if (sizeMatch && formats.length) {
      size = { size: sizeMatch[1]!, ratesHz: [] };
      formats[formats.length - 1]!.sizes.push(size);
      continue;
    }
    const rate = /Interval:.*\(([\d.]+) fps\)/.exec(line);
    if (rate && size) size.ratesHz!.push(Number(rate[1]));
  }
  return formats;
}

/** The /dev/video* devices in number order, each with what it offers. An empty list when there are none. */
export async function listVideoDevices(options: VideoDeviceListerOptions = {}): Promise<VideoDevice[]> {
  const devDir = options.devDir ?? "/dev";
  const sysDir = options.sysDir ?? "/sys/class/video4linux";
  const run = options.run ?? runProgram;
  let names: string[];
  try {
    names = readdirSync(devDir).filter((n) => /^video\d+$/.test(n));
  } catch {
    names = [];
  }
  names.sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)));
  const devices: VideoDevice[] = [];
  let v4l2Ctl = true;
  for (const node of names) {
    const path = join(devDir, node);
    let name: string | undefined;
    try {
      name = readFileSync(join(sysDir, node, "name"), "utf8").trim() || undefined;
    } catch {
      name = undefined;
    }
    const device: VideoDevice = { path, ...(name ? { name } : {}), formats: [], listedBy: "ffmpeg" };
    if (v4l2Ctl) {
      try {
        const { stdout } = await run("v4l2-ctl", ["--list-formats-ext", "-d", path]);
        device.formats = parseV4l2CtlFormats(stdout);
        device.listedBy = "v4l2-ctl";
      } catch {
        v4l2Ctl = false; // not installed: ffmpeg for this and every other device
      }
    }
    if (device.listedBy === "ffmpeg") {
      const { stderr } = await run(options.ffmpegPath ?? ffmpegInstaller.path, ["-hide_banner", "-nostdin", "-f", "v4l2", "-list_formats", "all", "-i", path]);
      device.formats = parseFfmpegFormats(stderr);
      if (!device.formats.length) {
        const last = stderr.trim().split("\n").filter((l) => l.trim()).pop() ?? "";
        device.problem = /Permission denied/i.test(stderr)
          ? "permission denied: add this user to the video group (sudo usermod -aG video $USER) and log in again"
          : /Not a video capture device|Inappropriate ioctl/i.test(stderr)
            ? "captures no video (a UVC camera's metadata node, beside its capture node)"
            : `ffmpeg listed no formats${last ? `: ${last.replace(/^\[[^\]]*\]\s*/, "").slice(0, 200)}` : ""}`;
      }
    }
    if (device.listedBy === "v4l2-ctl" && !device.formats.length) device.problem = "captures no video (a UVC camera's metadata node, beside its capture node)";
    devices.push(device);
  }
  return devices;
}

/** The listing as a technician reads it. */
export function formatVideoDevices(devices: readonly VideoDevice[], devDir = "/dev"): string {
  if (!devices.length) {
    return `This PC has no video devices (nothing matches ${join(devDir, "video*")}).\nPlug in a USB camera and run this again; if it still shows nothing, "sudo dmesg | grep -i uvc" says whether the kernel saw it.`;
  }
  const lines: string[] = [];
  for (const device of devices) {
    lines.push(`${device.path}${device.name ? `  (${device.name})` : ""}`);
    if (device.problem) {
      lines.push(`  ${device.problem}`);
      continue;
    }
    for (const format of device.formats) {
      lines.push(`  inputFormat "${format.format}"  ${format.description}${format.compressed ? ", compressed" : ""}`);
      for (const size of format.sizes) lines.push(`    ${size.size}${size.ratesHz ? `  ${size.ratesHz.length ? size.ratesHz.map((r) => `${r}`).join(", ") + " frames/s" : "rates not reported"}` : ""}`);
    }
  }
  if (devices.some((d) => d.listedBy === "ffmpeg" && d.formats.length)) {
    lines.push("", "Frame rates are not listed: ffmpeg 4.1 does not report them. Install v4l-utils (sudo apt-get install v4l-utils) and run this again to see them; the doctor measures the rate each configured camera delivers.");
  }
  lines.push("", `Give a camera's path (a /dev/v4l/by-id/ link stays the same across reboots), inputFormat, width, height and frameRateHz in the agent config's "cameras" (docs/install-cell-agent.md, Cameras).`);
  return lines.join("\n");
}
