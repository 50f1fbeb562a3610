/**
 * polygon-fill.ts's `fillPolygon` as a WebAssembly function, drawing the same bytes (every
 * arithmetic step is the JavaScript one in the same order, in float64; test/unit/sim-render-wasm.spec.ts
 * compares the two over random scenes) for less CPU: no bounds checks, no per-pixel clamped-array
 * conversions, the whole polygon (bounds, planes, edges, spans) in one call per face.
 *
 * Exactness: nearness is compared as the float32 stored value widened to float64 and stored
 * rounded to nearest (f32.demote_f64, as a Float32Array store); a channel's value goes through
 * min(v, 255), f64.nearest (ties to even) and a saturating truncation (NaN and negatives to 0),
 * which is Uint8ClampedArray's conversion (the SIMD kernel clamps after rounding instead, which gives the same
 * byte for every value: see `channels`); q and f advance by one addition per pixel, as in the JavaScript loop.
 *
 * The module is assembled here from its instructions (protocol/wasm-encoding.ts). Each filler owns its
 * memory: the noise table, one polygon's vertices, the frame's nearness and colour; the frame and
 * polygon a renderer sees are views of it (the memory never grows, so the views stay valid), and
 * so is the colour buffer a renderer lends its camera (no copy of the frame out of the memory).
 */
import { NOISE_MASK, PIXEL_NOISE, type FrameBuffer, type PolygonFiller, type ScreenPolygon } from "./polygon-fill.js";
import { f64, get, i32, i32TruncSatF64U, mem, moduleBytes, op, set, simd, tee, type, v, VOID, type Code } from "../../protocol/wasm-encoding.js";

/** Vertices a polygon may have (clipping adds at most one per plane). */
export const WASM_POLYGON_CAPACITY = 24;

// Memory layout: the noise table at 0, then the polygon's four vertex arrays, then nearness, then two colour buffers.
const NOISE_BYTES = PIXEL_NOISE.length * 4;
const VERTICES = Math.ceil(NOISE_BYTES / 64) * 64;
const XS = VERTICES;
const YS = XS + 8 * WASM_POLYGON_CAPACITY;
const QS = YS + 8 * WASM_POLYGON_CAPACITY;
const FS = QS + 8 * WASM_POLYGON_CAPACITY;
const NEARNESS = FS + 8 * WASM_POLYGON_CAPACITY;
const PAGE_BYTES = 65536;

const params = { n: type.i32, red: type.f64, green: type.f64, blue: type.f64, noiseOffset: type.i32, width: type.i32, height: type.i32, colour: type.i32 } as const;
const locals = {
  i: type.i32, j: type.i32, bi: type.i32, row: type.i32, rowLast: type.i32, np: type.i32, npEnd: type.i32, ci: type.i32, cp: type.i32, k: type.i32, p: type.i32,
  widthF: type.f64, heightF: type.f64, minY: type.f64, maxY: type.f64, minX: type.f64, maxX: type.f64, best: type.f64, area: type.f64, v: type.f64,
  x0: type.f64, y0: type.f64, x1: type.f64, y1: type.f64, x2: type.f64, y2: type.f64, det: type.f64,
  d1: type.f64, d2: type.f64, qx: type.f64, qy: type.f64, fx: type.f64, fy: type.f64, rowFirstF: type.f64, rowLastF: type.f64,
  y: type.f64, left: type.f64, right: type.f64, yi: type.f64, yj: type.f64, xi: type.f64, xa: type.f64, xb: type.f64,
  colFirst: type.f64, colLast: type.f64, dy: type.f64, q: type.f64, f: type.f64,
} as const;
/**
 * The SIMD kernel's own locals, declared after the others and only in that kernel: the face's (red, green) and
 * (blue, 0) pairs, a pixel's factor in both lanes, and its channels as 16-bit lanes before they narrow to bytes.
 */
const simdLocals = { redGreen: type.v128, blueZero: type.v128, fPair: type.v128, words: type.v128 } as const;
const names = [...Object.keys(params), ...Object.keys(locals), ...Object.keys(simdLocals)] as Array<keyof typeof params | keyof typeof locals | keyof typeof simdLocals>;
/** Local index of each parameter and local by name. */
const L = Object.fromEntries(names.map((name, index) => [name, index])) as Record<(typeof names)[number], number>;

/** The float64 at `array[index]` (array: a vertex array's address; index: i32 code). */
const load = (array: number, index: Code): Code => [...index, ...i32(3), op.i32Shl, op.f64Load, ...mem(3, array)];
const at = (array: number, local: number): Code => load(array, get(local));
const plus1 = (local: number): Code => [...get(local), ...i32(1), op.i32Add];
/** `local = local + amount` (i32). */
const bump = (local: number, amount: number | Code): Code => [...get(local), ...(typeof amount === "number" ? i32(amount) : amount), op.i32Add, ...set(local)];
/** `target = value` when `value op target` (the JavaScript `if (value < target) target = value`). */
const keepIf = (target: number, value: number, compare: number): Code => [...get(value), ...get(target), ...get(value), ...get(target), compare, op.select, ...set(target)];
const ifThen = (condition: Code, then: Code): Code => [...condition, op.if, VOID, ...then, op.end];
/** while (condition) body; `body` may not branch out itself. */
const whileLoop = (condition: Code, body: Code): Code => [op.block, VOID, op.loop, VOID, ...condition, 0x45 /* i32.eqz */, op.brIf, 1, ...body, op.br, 0, op.end, op.end];
const returnNothing: Code = [...i32(-1), op.return];

/** One channel's byte from its float64 value on the stack, as Uint8ClampedArray stores it. */
const clampedByte: Code = [...f64(255), op.f64Min, op.f64Nearest, ...i32TruncSatF64U];

function boundingBox(): Code {
  return [
    ...f64(Infinity), ...set(L.minY), ...f64(-Infinity), ...set(L.maxY), ...f64(Infinity), ...set(L.minX), ...f64(-Infinity), ...set(L.maxX),
    ...i32(0), ...set(L.i),
    ...whileLoop([...get(L.i), ...get(L.n), op.i32LtS], [
      ...at(YS, L.i), ...set(L.v), ...keepIf(L.minY, L.v, op.f64Lt), ...keepIf(L.maxY, L.v, op.f64Gt),
      ...at(XS, L.i), ...set(L.v), ...keepIf(L.minX, L.v, op.f64Lt), ...keepIf(L.maxX, L.v, op.f64Gt),
      ...bump(L.i, 1),
    ]),
    // if (maxX < 0 || minX > width || maxY < 0 || minY > height) return
    ...ifThen([
      ...get(L.maxX), ...f64(0), op.f64Lt, ...get(L.minX), ...get(L.widthF), op.f64Gt, op.i32Or,
      ...get(L.maxY), ...f64(0), op.f64Lt, op.i32Or, ...get(L.minY), ...get(L.heightF), op.f64Gt, op.i32Or,
    ], returnNothing),
  ];
}

/** The planes through vertex 0 and the pair spanning the largest triangle: qx, qy, fx, fy (returns when edge-on). */
function planes(): Code {
  const rel = (array: number, index: Code, origin: number): Code => [...load(array, index), ...get(origin), op.f64Sub];
  /** (d1 y2 - d2 y1) / det and (x1 d2 - x2 d1) / det for the values array. */
  const gradient = (values: number, dx: number, dy: number): Code => [
    ...load(values, get(L.bi)), ...load(values, i32(0)), op.f64Sub, ...set(L.d1),
    ...load(values, plus1(L.bi)), ...load(values, i32(0)), op.f64Sub, ...set(L.d2),
    ...get(L.d1), ...get(L.y2), op.f64Mul, ...get(L.d2), ...get(L.y1), op.f64Mul, op.f64Sub, ...get(L.det), op.f64Div, ...set(dx),
    ...get(L.x1), ...get(L.d2), op.f64Mul, ...get(L.x2), ...get(L.d1), op.f64Mul, op.f64Sub, ...get(L.det), op.f64Div, ...set(dy),
  ];
  return [
    ...load(XS, i32(0)), ...set(L.x0), ...load(YS, i32(0)), ...set(L.y0),
    ...f64(0), ...set(L.best), ...i32(1), ...set(L.bi), ...i32(1), ...set(L.i),
    ...whileLoop([...plus1(L.i), ...get(L.n), op.i32LtS], [
      // |(xs[i] - x0) * (ys[i + 1] - y0) - (xs[i + 1] - x0) * (ys[i] - y0)|
      ...rel(XS, get(L.i), L.x0), ...rel(YS, plus1(L.i), L.y0), op.f64Mul,
      ...rel(XS, plus1(L.i), L.x0), ...rel(YS, get(L.i), L.y0), op.f64Mul, op.f64Sub, op.f64Abs, ...set(L.area),
      ...ifThen([...get(L.area), ...get(L.best), op.f64Gt], [...get(L.area), ...set(L.best), ...get(L.i), ...set(L.bi)]),
      ...bump(L.i, 1),
    ]),
    ...ifThen([...get(L.best), ...f64(1e-9), op.f64Lt], returnNothing),
    ...rel(XS, get(L.bi), L.x0), ...set(L.x1), ...rel(YS, get(L.bi), L.y0), ...set(L.y1),
    ...rel(XS, plus1(L.bi), L.x0), ...set(L.x2), ...rel(YS, plus1(L.bi), L.y0), ...set(L.y2),
    ...get(L.x1), ...get(L.y2), op.f64Mul, ...get(L.x2), ...get(L.y1), op.f64Mul, op.f64Sub, ...set(L.det),
    ...gradient(QS, L.qx, L.qy),
    ...gradient(FS, L.fx, L.fy),
  ];
}

/** left and right: where the polygon's edges cross the scan line at y. */
function rowEnds(): Code {
  const outside = (compare: number): Code => [...get(L.y), ...get(L.yi), compare, ...get(L.y), ...get(L.yj), compare, op.i32And];
  return [
    ...f64(Infinity), ...set(L.left), ...f64(-Infinity), ...set(L.right),
    ...i32(0), ...set(L.i), ...get(L.n), ...i32(1), op.i32Sub, ...set(L.j),
    ...whileLoop([...get(L.i), ...get(L.n), op.i32LtS], [
      ...at(YS, L.i), ...set(L.yi), ...at(YS, L.j), ...set(L.yj),
      ...outside(op.f64Lt), ...outside(op.f64Gt), op.i32Or, 0x45 /* i32.eqz */, op.if, VOID,
      ...at(XS, L.i), ...set(L.xi),
      // A horizontal edge on the scan line contributes both ends.
      ...get(L.yi), ...get(L.yj), op.f64Eq, op.if, VOID,
      ...get(L.xi), ...set(L.xa), ...at(XS, L.j), ...set(L.xb),
      op.else,
      // xs[i] + ((y - yi) * (xs[j] - xs[i])) / (yj - yi)
      ...get(L.xi), ...get(L.y), ...get(L.yi), op.f64Sub, ...at(XS, L.j), ...get(L.xi), op.f64Sub, op.f64Mul,
      ...get(L.yj), ...get(L.yi), op.f64Sub, op.f64Div, op.f64Add, ...tee(L.xa), ...set(L.xb),
      op.end,
      ...keepIf(L.left, L.xa, op.f64Lt), ...keepIf(L.left, L.xb, op.f64Lt), ...keepIf(L.right, L.xa, op.f64Gt), ...keepIf(L.right, L.xb, op.f64Gt),
      op.end,
      ...get(L.i), ...set(L.j), ...bump(L.i, 1),
    ]),
  ];
}

/** The pixels of one row's span colFirst..colLast that pass the nearness test. */
function span(withSimd: boolean): Code {
  /**
   * The three channels at once: (red, green) and (blue, 0) as float64 pairs through the scalar path's steps (colour x
   * factor + noise, rounded to nearest, ties to even), converted with signed saturation and narrowed with saturation to
   * 16 bits and then to unsigned bytes: negatives, -Infinity and NaN give 0 and anything over 255 gives 255, which is
   * the scalar path's min(v, 255) before rounding and its unsigned saturating conversion, without their longer
   * instruction sequences. Red and green are stored as two bytes, blue as one.
   */
  const channels: Code = [
    ...get(L.redGreen), ...get(L.f), ...v(simd.f64x2Splat), ...tee(L.fPair), ...v(simd.f64x2Mul),
    ...get(L.k), ...v(simd.load64Zero, ...mem(2)), ...v(simd.f64x2PromoteLowF32x4), ...v(simd.f64x2Add),
    ...v(simd.f64x2Nearest), ...v(simd.i32x4TruncSatF64x2SZero),
    ...get(L.blueZero), ...get(L.fPair), ...v(simd.f64x2Mul),
    ...get(L.k), ...v(simd.load32Zero, ...mem(2, 8)), ...v(simd.f64x2PromoteLowF32x4), ...v(simd.f64x2Add),
    ...v(simd.f64x2Nearest), ...v(simd.i32x4TruncSatF64x2SZero),
    // [r, g, 0, 0] and [b, 0, 0, 0] as 32-bit lanes -> [r, g, 0, 0, b, 0, 0, 0] as 16-bit -> bytes r, g at 0, 1 and b at 4.
    ...v(simd.i16x8NarrowI32x4S), ...tee(L.words), ...get(L.words), ...v(simd.i8x16NarrowI16x8U), ...set(L.words),
    ...get(L.cp), ...get(L.words), ...v(simd.store16Lane, ...mem(0), 0),
    ...get(L.cp), ...get(L.words), ...v(simd.store8Lane, ...mem(0, 2), 4),
  ];
  const channel = (gain: number, index: number): Code => [
    ...get(L.cp), ...get(gain), ...get(L.f), op.f64Mul, ...get(L.k), op.f32Load, ...mem(2, 4 * index), op.f64PromoteF32, op.f64Add,
    ...clampedByte, op.i32Store8, ...mem(0, index),
  ];
  /** plane value at the span's first pixel centre: base + d/dx (colFirst + 0.5 - x0) + d/dy dy */
  const start = (values: number, dx: number, dy: number): Code => [
    ...load(values, i32(0)), ...get(dx), ...get(L.colFirst), ...f64(0.5), op.f64Add, ...get(L.x0), op.f64Sub, op.f64Mul, op.f64Add,
    ...get(dy), ...get(L.dy), op.f64Mul, op.f64Add,
  ];
  const pixel = (col: number): Code => [...get(L.row), ...get(L.width), op.i32Mul, ...get(col), op.i32TruncF64S, op.i32Add];
  return [
    ...get(L.y), ...get(L.y0), op.f64Sub, ...set(L.dy),
    ...start(QS, L.qx, L.qy), ...set(L.q),
    ...start(FS, L.fx, L.fy), ...set(L.f),
    ...pixel(L.colFirst), ...tee(L.p), ...i32(2), op.i32Shl, ...i32(NEARNESS), op.i32Add, ...set(L.np),
    ...pixel(L.colLast), ...i32(2), op.i32Shl, ...i32(NEARNESS), op.i32Add, ...set(L.npEnd),
    ...get(L.p), ...i32(3), op.i32Mul, ...tee(L.ci), ...get(L.colour), op.i32Add, ...set(L.cp),
    op.loop, VOID,
    // if (!(q < nearness[p])): store nearness and the three channels
    ...ifThen([...get(L.q), ...get(L.np), op.f32Load, ...mem(2), op.f64PromoteF32, op.f64Lt, 0x45 /* i32.eqz */], [
      ...get(L.np), ...get(L.q), op.f32DemoteF64, op.f32Store, ...mem(2),
      ...get(L.ci), ...get(L.noiseOffset), op.i32Add, ...i32(NOISE_MASK), op.i32And, ...i32(2), op.i32Shl, ...set(L.k),
      ...(withSimd ? channels : [...channel(L.red, 0), ...channel(L.green, 1), ...channel(L.blue, 2)]),
    ]),
    ...get(L.q), ...get(L.qx), op.f64Add, ...set(L.q),
    ...get(L.f), ...get(L.fx), op.f64Add, ...set(L.f),
    ...bump(L.ci, 3), ...bump(L.cp, 3), ...bump(L.np, 4),
    ...get(L.np), ...get(L.npEnd), op.i32LeU, op.brIf, 0,
    op.end,
  ];
}

function fillBody(withSimd: boolean): Code {
  return [
    ...(withSimd
      ? [...get(L.red), ...v(simd.f64x2Splat), ...get(L.green), ...v(simd.f64x2ReplaceLane, 1), ...set(L.redGreen),
        ...f64(0), ...v(simd.f64x2Splat), ...get(L.blue), ...v(simd.f64x2ReplaceLane, 0), ...set(L.blueZero)]
      : []),
    ...get(L.width), op.f64ConvertI32S, ...set(L.widthF), ...get(L.height), op.f64ConvertI32S, ...set(L.heightF),
    ...ifThen([...get(L.n), ...i32(3), op.i32LtS], returnNothing),
    ...boundingBox(),
    ...planes(),
    // rows: max(0, ceil(minY - 0.5)) .. min(height - 1, floor(maxY - 0.5))
    ...f64(0), ...get(L.minY), ...f64(0.5), op.f64Sub, op.f64Ceil, op.f64Max, ...set(L.rowFirstF),
    ...get(L.heightF), ...f64(1), op.f64Sub, ...get(L.maxY), ...f64(0.5), op.f64Sub, op.f64Floor, op.f64Min, ...set(L.rowLastF),
    ...ifThen([...get(L.rowFirstF), ...get(L.rowLastF), op.f64Gt], returnNothing),
    ...get(L.rowFirstF), op.i32TruncF64S, ...set(L.row), ...get(L.rowLastF), op.i32TruncF64S, ...set(L.rowLast),
    ...whileLoop([...get(L.row), ...get(L.rowLast), op.i32LeS], [
      ...get(L.row), op.f64ConvertI32S, ...f64(0.5), op.f64Add, ...set(L.y),
      ...rowEnds(),
      // columns: max(0, ceil(left - 0.5)) .. min(width - 1, ceil(right - 0.5) - 1); none when either is NaN
      ...f64(0), ...get(L.left), ...f64(0.5), op.f64Sub, op.f64Ceil, op.f64Max, ...set(L.colFirst),
      ...get(L.widthF), ...f64(1), op.f64Sub, ...get(L.right), ...f64(0.5), op.f64Sub, op.f64Ceil, ...f64(1), op.f64Sub, op.f64Min, ...set(L.colLast),
      ...ifThen([...get(L.colFirst), ...get(L.colLast), op.f64Le], span(withSimd)),
      ...bump(L.row, 1),
    ]),
    // The rows drawn, first << 16 | last.
    ...get(L.rowFirstF), op.i32TruncF64S, ...i32(16), op.i32Shl, ...get(L.rowLast), op.i32Or,
  ];
}

/** The compiled kernels, SIMD (true) and scalar (false): compiled once per process, null where one does not validate. */
const compiled = new Map<boolean, WebAssembly.Module | null>();

/** The kernel's module bytes, with or without SIMD (the three channels as two float64 pairs). */
export function kernelBytes(withSimd: boolean): Uint8Array<ArrayBuffer> {
  return moduleBytes({ exportName: "fill", params: Object.values(params), result: type.i32, locals: [...Object.values(locals), ...(withSimd ? Object.values(simdLocals) : [])], body: fillBody(withSimd) });
}

/** One kernel's module (about 0.2 ms to compile). */
function kernelModule(withSimd: boolean): WebAssembly.Module | null {
  let module = compiled.get(withSimd);
  if (module === undefined) {
    const bytes = kernelBytes(withSimd);
    module = WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : null;
    compiled.set(withSimd, module);
  }
  return module;
}

/**
 * The WebAssembly filler for frames of `width` x `height`: the SIMD kernel (`kernel` "simd", where
 * WebAssembly SIMD runs, else the scalar one) or the scalar one; null when none runs here (the
 * renderer then uses fillPolygon).
 */
export function wasmPolygonFiller(width: number, height: number, kernel: "simd" | "scalar" = "simd"): PolygonFiller | null {
  const module = (kernel === "simd" ? kernelModule(true) : null) ?? kernelModule(false);
  if (!module) return null;
  const colourBytes = width * height * 3;
  const colourAts = [NEARNESS + width * height * 4, NEARNESS + width * height * 4 + colourBytes] as const;
  const memory = new WebAssembly.Memory({ initial: Math.ceil((colourAts[1] + colourBytes) / PAGE_BYTES) });
  const instance = new WebAssembly.Instance(module, { env: { memory } });
  const fillExport = instance.exports.fill as (n: number, red: number, green: number, blue: number, noiseOffset: number, width: number, height: number, colour: number) => number;
  new Float32Array(memory.buffer, 0, PIXEL_NOISE.length).set(PIXEL_NOISE);
  const vertices = (at: number) => new Float64Array(memory.buffer, at, WASM_POLYGON_CAPACITY);
  const poly: ScreenPolygon = { xs: vertices(XS), ys: vertices(YS), qs: vertices(QS), fs: vertices(FS), count: 0, red: 0, green: 0, blue: 0, noiseOffset: 0 };
  const colourBuffers = [new Uint8ClampedArray(memory.buffer, colourAts[0], colourBytes), new Uint8ClampedArray(memory.buffer, colourAts[1], colourBytes)] as const;
  const frame: FrameBuffer = { width, height, colour: colourBuffers[0], nearness: new Float32Array(memory.buffer, NEARNESS, width * height), drawnRows: { first: height, last: -1 } };
  let colourAt: number = colourAts[0];
  return {
    frame, poly, colourBuffers,
    drawInto(buffer: 0 | 1): void {
      frame.colour = colourBuffers[buffer];
      colourAt = colourAts[buffer];
    },
    fill(): void {
      const rows = fillExport(poly.count, poly.red, poly.green, poly.blue, poly.noiseOffset, width, height, colourAt);
      if (rows < 0) return;
      const first = rows >>> 16, last = rows & 0xffff;
      const drawn = frame.drawnRows;
      if (first < drawn.first) drawn.first = first;
      if (last > drawn.last) drawn.last = last;
    },
  };
}
