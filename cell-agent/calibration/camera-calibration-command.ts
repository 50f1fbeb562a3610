/**
 * `cell-agent calibration camera <name> --board 9x6 --square-mm 24 [--views 15] [--from <dir>] [--write]`:
 * takes views of a checkerboard (JPEG files from a folder, or frames from the configured camera, one
 * per Enter in a terminal), finds the board in each, calibrates (Zhang, OpenCV's plumb_bob model)
 * and gives the camera's `calibration` block for the agent config; with `--write` it puts the block
 * into the config file (the rest of the file unchanged, checked by the config compiler first).
 */
import { readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compileAgentConfig } from "../config.js";
import type { CameraCalibration } from "../hardware/types.js";
import { calibrateCamera, MAX_VIEWS, type CalibrationView, type CameraCalibrationResult } from "./calibrate-camera.js";
import { findCheckerboard, type BoardSize } from "./find-checkerboard.js";
import { grayFromJpeg } from "./gray-image.js";

export interface CameraCalibrationRequest {
  camera: string;
  board: BoardSize;
  squareMm: number;
  /** How many usable views to take from a camera (default 15); a folder gives all of its JPEGs. */
  views: number;
  /** A folder of JPEG photos instead of the camera. */
  fromDir?: string;
  write: boolean;
}

/** Parses "9x6" (inner corners); throws a usage error with the value. */
export function parseBoardSize(text: string): BoardSize {
  const match = /^(\d{1,2})x(\d{1,2})$/.exec(text);
  const cols = match ? Number(match[1]) : 0, rows = match ? Number(match[2]) : 0;
  if (!match || cols < 3 || rows < 3 || cols > 40 || rows > 40) throw new Error(`--board must be the board's inner corners as <cols>x<rows>, each 3..40, e.g. 9x6 for a board of 10 x 7 squares; got ${JSON.stringify(text.slice(0, 40))}`);
  return { cols: Math.max(cols, rows), rows: Math.min(cols, rows) };
}

/** A frame to try: its label in messages and its JPEG bytes. */
export interface CalibrationFrame {
  label: string;
  jpeg: Uint8Array;
}

/** The JPEG files of a folder, sorted by name; refuses more than MAX_VIEWS. */
export function framesFromDir(dir: string): CalibrationFrame[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /\.jpe?g$/i.test(n)).sort();
  } catch (error) {
    throw new Error(`cannot read the folder ${dir}: ${(error as Error).message}`);
  }
  if (names.length === 0) throw new Error(`${dir} holds no .jpg or .jpeg files`);
  if (names.length > MAX_VIEWS) throw new Error(`${dir} holds ${names.length} JPEGs; at most ${MAX_VIEWS} views are used: keep the ${MAX_VIEWS} most varied`);
  return names.filter((n) => statSync(join(dir, n)).isFile()).map((n) => ({ label: n, jpeg: new Uint8Array(readFileSync(join(dir, n))) }));
}

/** One frame's board, or the reason it was not usable. */
export function viewFromFrame(frame: CalibrationFrame, board: BoardSize, squareMm: number): { view: CalibrationView; width: number; height: number } {
  const image = grayFromJpeg(frame.jpeg);
  const imagePoints = findCheckerboard(image, board);
  const objectPoints: [number, number][] = [];
  for (let j = 0; j < board.rows; j++) for (let i = 0; i < board.cols; i++) objectPoints.push([i * squareMm, j * squareMm]);
  return { view: { label: frame.label, objectPoints, imagePoints }, width: image.width, height: image.height };
}

/** The config block: intrinsics from the calibration; extrinsics kept from the camera's current block, or the identity in "uncalibrated". */
export function calibrationBlock(result: CameraCalibrationResult, previous?: CameraCalibration): CameraCalibration {
  const k = result.intrinsics;
  const round = (x: number, digits: number) => Number(x.toFixed(digits));
  return {
    width: result.width, height: result.height, model: "pinhole",
    fx: round(k.fx, 3), fy: round(k.fy, 3), cx: round(k.cx, 3), cy: round(k.cy, 3),
    distortion: k.distortion.map((d) => round(d, 6)),
    extrinsics: previous?.extrinsics ?? { parent_frame: "uncalibrated", translation_m: [0, 0, 0], rotation_xyzw: [0, 0, 0, 1] },
  };
}

export function describeResult(result: CameraCalibrationResult): string[] {
  const k = result.intrinsics;
  return [
    `calibrated from ${result.perView.length} views (${result.width}x${result.height}, ${result.iterations} iterations):`,
    `  fx ${k.fx.toFixed(2)}  fy ${k.fy.toFixed(2)}  cx ${k.cx.toFixed(2)}  cy ${k.cy.toFixed(2)} px`,
    `  distortion [k1, k2, p1, p2, k3] = [${k.distortion.map((d) => d.toFixed(5)).join(", ")}]`,
    `  RMS reprojection error ${result.rmsPx.toFixed(3)} px${result.rmsPx > 1 ? " (above 1 px: look for blurred views or a bent board, retake those)" : ""}`,
    `  board tilts span ${result.tiltSpreadDeg.toFixed(0)} degrees`,
    ...result.perView.map((v) => `  ${v.label}: ${v.rmsPx.toFixed(3)} px`),
  ];
}

/**
 * Puts `block` as camera `name`'s calibration into the JSON config at `path`, after checking that the
 * agent's config compiler accepts the result; writes to a temporary file and renames it (same mode).
 */
export function writeCalibrationToConfig(path: string, name: string, block: CameraCalibration): void {
  const raw = JSON.parse(readFileSync(path, "utf8")) as { cameras?: { name?: string; calibration?: unknown }[] };
  const camera = raw.cameras?.find((c) => c.name === name);
  if (!camera) throw new Error(`${path} has no camera named ${JSON.stringify(name)}`);
  camera.calibration = block;
  compileAgentConfig(raw);
  const temporary = `${path}.calibration-tmp`;
  writeFileSync(temporary, `${JSON.stringify(raw, null, 2)}\n`, { mode: statSync(path).mode & 0o777 });
  renameSync(temporary, path);
}

/** Tries each frame, printing progress; calibrates from those with the whole board. */
export function calibrateFromFrames(frames: readonly CalibrationFrame[], request: Pick<CameraCalibrationRequest, "board" | "squareMm">, log: (line: string) => void): CameraCalibrationResult {
  const views: CalibrationView[] = [];
  let size: { width: number; height: number } | undefined;
  for (const frame of frames) {
    try {
      const { view, width, height } = viewFromFrame(frame, request.board, request.squareMm);
      if (size && (size.width !== width || size.height !== height)) throw new Error(`it is ${width}x${height}, the first view was ${size.width}x${size.height}: every view must come from the camera at one size`);
      size = { width, height };
      views.push(view);
      log(`view ${views.length}: ${frame.label}: found all ${view.imagePoints.length} corners`);
    } catch (error) {
      log(`skipped ${frame.label}: ${(error as Error).message}`);
    }
  }
  if (!size) throw new Error(`the ${request.board.cols}x${request.board.rows} board was found in none of the ${frames.length} frames`);
  return calibrateCamera(views, size.width, size.height);
}

/**
 * Takes views from a live camera: each Enter on `input` grabs the newest frame and tries it; "q" then
 * Enter stops early. Ends after `views` usable views. `capture` gives the newest frame's JPEG.
 */
export async function framesFromTerminal(capture: () => Promise<Uint8Array>, request: Pick<CameraCalibrationRequest, "board" | "squareMm" | "views">, input: NodeJS.ReadableStream, log: (line: string) => void): Promise<CalibrationFrame[]> {
  const { createInterface } = await import("node:readline");
  const lines = createInterface({ input, terminal: false });
  const frames: CalibrationFrame[] = [];
  let taken = 0;
  log(`hold the ${request.board.cols}x${request.board.rows} board in view and press Enter for each view (${request.views} needed; vary tilt and place; "q" then Enter to stop)`);
  try {
    for await (const line of lines) {
      if (line.trim().toLowerCase() === "q") break;
      taken++;
      const frame = { label: `view ${taken}`, jpeg: await capture() };
      try {
        viewFromFrame(frame, request.board, request.squareMm);
        frames.push(frame);
        log(`${frame.label}: board found (${frames.length}/${request.views})`);
      } catch (error) {
        log(`${frame.label}: not used: ${(error as Error).message}`);
      }
      if (frames.length >= request.views || taken >= 4 * MAX_VIEWS) break;
    }
  } finally {
    lines.close();
  }
  return frames;
}
