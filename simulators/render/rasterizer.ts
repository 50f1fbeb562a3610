/**
 * Software rasterizer of the simulated cameras: draws the cell's faces (static surroundings,
 * objects, the posed arm and gripper) through a camera model with a nearness test, flat shading
 * under the realized lighting and seeded sensor noise, into RGB24.
 *
 * Cost: a fixed camera's static scene (table, floor, wall, base) is drawn once per lighting into a
 * few noisy variants; a frame copies one and draws only what moves. The wrist camera moves, so it
 * draws everything, culled to its view. Drawing allocates per face, never per pixel. Faces are
 * filled by the WebAssembly kernel (polygon-fill-wasm.ts) into its memory, byte for byte what
 * fillPolygon (the JavaScript reference, `fill: "javascript"`) draws.
 */
import type { ToolPose } from "../world/kinematics.js";
import type { SimObject } from "../world/objects.js";
import { cameraModel, cameraSize, type CameraModel, type RenderedImage } from "./cameras.js";
import { falloffAt, lightingPreset, shadeOf, tintedPreset, type LightingPreset } from "./lighting.js";
import { javascriptPolygonFiller, NOISE_MASK, type PolygonFiller } from "./polygon-fill.js";
import { WASM_POLYGON_CAPACITY, wasmPolygonFiller } from "./polygon-fill-wasm.js";
import { staticFaces } from "./scene-geometry.js";
import { SceneFaces } from "./scene-faces.js";
import type { Face } from "./solids.js";

/** What a camera saw at capture time. */
export interface RenderScene {
  objects: SimObject[];
  tool: ToolPose;
  opening: number;
  /** Arm vector [yaw, shoulder, elbow, wristPitch, wristRoll]. */
  arm: number[];
  lighting: string;
  /** Seeds this frame's pixel noise. */
  noiseSeed: number;
}

/** Noisy copies of a fixed camera's static scene; a frame starts from one chosen by its seed. */
const BACKGROUND_VARIANTS = 4;
const STATIC_FACES = staticFaces();
const MAX_VERTICES = WASM_POLYGON_CAPACITY;

/** Scratch space for one face's vertices in camera coordinates, before and after clipping. */
class ClipBuffers {
  readonly a = [new Float64Array(MAX_VERTICES), new Float64Array(MAX_VERTICES), new Float64Array(MAX_VERTICES), new Float64Array(MAX_VERTICES)];
  readonly b = [new Float64Array(MAX_VERTICES), new Float64Array(MAX_VERTICES), new Float64Array(MAX_VERTICES), new Float64Array(MAX_VERTICES)];
}

/** Keeps the part of a polygon (x, y, z camera coordinates and a factor) at z >= near; returns its vertex count. */
function clipNear(src: Float64Array[], n: number, dst: Float64Array[], near: number): number {
  let m = 0;
  for (let i = 0; i < n; i++) {
    const j = (i + 1) % n;
    const zi = src[2][i], zj = src[2][j];
    const inI = zi >= near, inJ = zj >= near;
    if (inI) {
      for (let k = 0; k < 4; k++) dst[k][m] = src[k][i];
      m++;
    }
    if (inI !== inJ && m < MAX_VERTICES) {
      const t = (near - zi) / (zj - zi);
      for (let k = 0; k < 4; k++) dst[k][m] = src[k][i] + (src[k][j] - src[k][i]) * t;
      m++;
    }
  }
  return m;
}

/**
 * Draws one face into the frame (culled when turned away or behind the camera). Runs for every face
 * of every frame, so it allocates nothing: vertices go through the camera model into the clip
 * buffers and the screen polygon in place; a face's colour is material x the preset's gains x shadeOf(normal),
 * before each vertex's falloff.
 */
function drawFace(filler: PolygonFiller, model: CameraModel, light: LightingPreset, face: Face, clip: ClipBuffers): void {
  const points = face.points;
  if (!model.sees(points[0], face.normal)) return;
  const n = Math.min(points.length, MAX_VERTICES);
  let src = clip.a;
  const zs = src[2];
  const factors = src[3];
  let allIn = true;
  for (let i = 0; i < n; i++) {
    const point = points[i];
    model.toCameraInto(point, src, i);
    factors[i] = falloffAt(light, point[0]);
    if (zs[i] < model.nearM) allIn = false;
  }
  let count = n;
  if (!allIn) {
    count = clipNear(src, n, clip.b, model.nearM);
    src = clip.b;
  }
  if (count < 3) return;
  const [cxs, cys, czs, cfs] = src;
  const poly = filler.poly;
  const { xs, ys, qs, fs } = poly;
  for (let i = 0; i < count; i++) {
    model.projectInto(cxs[i], cys[i], czs[i], xs, ys, qs, i);
    fs[i] = cfs[i];
  }
  poly.count = count;
  const { colour, normal } = face;
  const shade = shadeOf(normal);
  poly.red = colour[0] * light.gain[0] * shade;
  poly.green = colour[1] * light.gain[1] * shade;
  poly.blue = colour[2] * light.gain[2] * shade;
  filler.fill();
}

/** Which polygon fill draws: the WebAssembly kernel (where it runs) or the JavaScript reference; the bytes are the same. */
export type PolygonFill = "wasm" | "javascript";

/** Renders one named camera of a cell, keeping what can be reused between its frames. */
export class CameraRenderer {
  readonly width: number;
  readonly height: number;
  private readonly nearness: Float32Array;
  /** The frame being drawn (colour and nearness) and the polygon being filled: the kernel's memory. */
  private readonly filler: PolygonFiller;
  /** The filler's colour buffers as plain bytes: [0] lent to the camera (ownBuffer), [1] copied out of. */
  private readonly colourBytes: readonly [Uint8Array, Uint8Array];
  private readonly clip = new ClipBuffers();
  /** A moving camera's empty nearness (all -Infinity), copied in per frame: a memcpy, where V8's float fill is a scalar loop (13 against 18-54 us a 320x240 frame). */
  private emptyNearness: Float32Array | undefined;
  private readonly faces: SceneFaces;
  private fixedModel: CameraModel | undefined;
  private background: { lighting: string; variants: Uint8ClampedArray[]; nearness: Float32Array } | undefined;
  /** Rows of `nearness` that differ from the background's since the last frame (fixed cameras). */
  private nearnessDirty: { background: CameraRenderer["background"]; first: number; last: number } | undefined;

  /**
   * `cell`: this cell's top camera mount offset and colour gains (cell-variation.ts; default none), and
   * `sceneFaces`, the objects' and arm's faces shared with the cell's other cameras (default: this renderer's own).
   * `fill`: "wasm" (default; the JavaScript reference where WebAssembly does not run) or "javascript".
   */
  constructor(
    readonly name: string,
    private readonly cell: { topMountOffsetM?: readonly [number, number]; colourGain?: readonly [number, number, number]; sceneFaces?: SceneFaces } = {},
    fill: PolygonFill = "wasm",
  ) {
    ({ width: this.width, height: this.height } = cameraSize(name));
    this.faces = cell.sceneFaces ?? new SceneFaces();
    this.filler = (fill === "wasm" ? wasmPolygonFiller(this.width, this.height) : null) ?? javascriptPolygonFiller(this.width, this.height, MAX_VERTICES);
    this.nearness = this.filler.frame.nearness;
    const bytesOf = (colour: Uint8ClampedArray) => new Uint8Array(colour.buffer, colour.byteOffset, colour.length);
    this.colourBytes = [bytesOf(this.filler.colourBuffers[0]), bytesOf(this.filler.colourBuffers[1])];
  }

  /**
   * The renderer's own frame buffer (RGB24, width x height x 3 bytes): `render(scene, ownBuffer())`
   * draws there in place, with no copy; any other render leaves it as it is. The same buffer every call.
   */
  ownBuffer(): Uint8Array {
    return this.colourBytes[0];
  }

  /**
   * The camera's picture of the scene, RGB24, in `target` (width x height x 3 bytes) or else in a
   * new buffer. Rendering is a pure function of the scene: the same scene gives the same bytes.
   */
  render(scene: RenderScene, target?: Uint8Array): RenderedImage {
    // A fixed camera's model does not depend on the scene: built once, not per frame.
    const model = this.fixedModel ?? cameraModel(this.name, scene.tool, this.cell.topMountOffsetM);
    if (model.fixed) this.fixedModel = model;
    const light = tintedPreset(lightingPreset(scene.lighting), this.cell.colourGain ?? [1, 1, 1]);
    const size = this.width * this.height * 3;
    if (target && target.length !== size) throw new Error(`a ${this.name} frame needs a ${size}-byte buffer (${this.width}x${this.height} RGB24); got ${target.length} bytes`);
    const inPlace = target !== undefined && target.buffer === this.colourBytes[0].buffer && target.byteOffset === this.colourBytes[0].byteOffset;
    this.filler.drawInto(inPlace ? 0 : 1);
    const frame = this.filler.frame;
    const seed = scene.noiseSeed >>> 0;
    let background: CameraRenderer["background"];
    if (model.fixed) {
      background = this.backgroundFor(model, scene.lighting, light);
      frame.colour.set(background.variants[seed % BACKGROUND_VARIANTS]);
      this.restoreNearness(background);
    } else {
      frame.colour.fill(0);
      frame.nearness.set((this.emptyNearness ??= new Float32Array(frame.nearness.length).fill(-Infinity)));
    }
    frame.drawnRows.first = this.height;
    frame.drawnRows.last = -1;
    if (!model.fixed) this.drawAll(model, light, STATIC_FACES, seed);
    this.drawAll(model, light, this.faces.objectFaces(scene.objects), seed);
    this.drawAll(model, light, this.faces.armFaces(scene.arm, scene.opening), seed);
    this.nearnessDirty = background ? { background, first: frame.drawnRows.first, last: frame.drawnRows.last } : undefined;
    if (inPlace) return { width: this.width, height: this.height, rgb: this.colourBytes[0] };
    const bytes = target ?? Buffer.allocUnsafe(size);
    const rgb = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
    rgb.set(this.colourBytes[1]);
    return { width: this.width, height: this.height, rgb };
  }

  /** Puts the background's nearness back: only the rows the last frame drew into when it was over the same background. */
  private restoreNearness(background: NonNullable<CameraRenderer["background"]>): void {
    const dirty = this.nearnessDirty;
    if (dirty?.background !== background) {
      this.nearness.set(background.nearness);
      return;
    }
    if (dirty.first > dirty.last) return;
    const start = dirty.first * this.width;
    const end = (dirty.last + 1) * this.width;
    this.nearness.set(background.nearness.subarray(start, end), start);
  }

  private drawAll(model: CameraModel, light: LightingPreset, faces: readonly Face[], seed: number): void {
    this.filler.poly.noiseOffset = (seed >>> 7) & NOISE_MASK;
    for (const face of faces) drawFace(this.filler, model, light, face, this.clip);
  }

  private backgroundFor(model: CameraModel, lighting: string, light: LightingPreset): NonNullable<CameraRenderer["background"]> {
    if (this.background?.lighting === lighting) return this.background;
    const variants: Uint8ClampedArray[] = [];
    for (let k = 0; k < BACKGROUND_VARIANTS; k++) {
      const frame = this.filler.frame;
      frame.colour.fill(0);
      frame.nearness.fill(-Infinity);
      this.drawAll(model, light, STATIC_FACES, k * 7919 * 131);
      variants.push(frame.colour.slice());
    }
    this.background = { lighting, variants, nearness: this.nearness.slice() };
    this.nearnessDirty = undefined;
    return this.background;
  }
}
