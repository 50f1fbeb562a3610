/**
 * rgb-to-yuv420p.ts's conversion as a WebAssembly SIMD kernel, for frames whose width is a multiple
 * of 16: 16 pixels of two rows at a time (three 16-byte loads a row, deinterleaved with
 * `i8x16.swizzle`), 16-bit lanes for the arithmetic. Bit for bit the JavaScript loop's results
 * (test/unit/rgb-to-yuv420p.spec.ts), at about a tenth of its CPU (scripts/bench/render.ts).
 *
 * The module is assembled here from its instructions (no toolchain, no binary in the repository):
 * `convert(rgb, out, width, height)` reads `width * height * 3` bytes at `rgb` and writes the Y, Cb
 * and Cr planes from `out`, in a memory the caller provides. Every arithmetic step wraps modulo 2^16,
 * which is exact here: each result lies in 0..65535 before its final shift (see `luma` and `chroma`).
 */

import { get, i32, moduleBytes, set, type, uleb, v, type Code } from "../../protocol/wasm-encoding.js";

const I32 = type.i32;
const V128 = type.v128;
/** The kernel's single-byte opcodes. */
const op = {
  block: 0x02, loop: 0x03, br: 0x0c, brIf: 0x0d, end: 0x0b,
  localGet: 0x20, localSet: 0x21, i32Const: 0x41, i32GeU: 0x4f, i32LtU: 0x49, i32Add: 0x6a, i32Mul: 0x6c, i32ShrU: 0x76,
} as const;
/** SIMD instructions: 0xfd and their number. */
const simd = {
  load: 0x00, store: 0x0b, const: 0x0c, swizzle: 0x0e, or: 0x50, store64Lane: 0x5b, narrowU: 0x66, extaddPairwiseU: 0x7d,
  extendLowU: 0x89, extendHighU: 0x8a, shrU: 0x8d, add: 0x8e, mul: 0x95,
} as const;

const vconst = (bytes: readonly number[]): Code => v(simd.const, ...bytes);
/** Eight 16-bit lanes of `value` (two's complement). */
const i16s = (value: number): Code => vconst(Array.from({ length: 16 }, (_, i) => ((value & 0xffff) >> (i % 2 === 0 ? 0 : 8)) & 0xff));
/** memarg: alignment hint 0, `offset`. */
const mem = (offset = 0): number[] => [0, ...uleb(offset)];

// Locals: the 4 parameters, then i32s, then v128s.
const [RGB, OUT, WIDTH, HEIGHT] = [0, 1, 2, 3];
const [Y, P, Q, YO, UO, VO, END, STRIDE] = [4, 5, 6, 7, 8, 9, 10, 11];
const [R0, G0, B0, R1, G1, B1, V0, V1, V2] = [12, 13, 14, 15, 16, 17, 18, 19, 20];

/** Swizzle masks taking channel `c` (0 R, 1 G, 2 B) of 16 packed RGB pixels out of the k-th 16-byte load (others: 0). */
function channelMask(c: number, k: number): number[] {
  return Array.from({ length: 16 }, (_, i) => {
    const source = 3 * i + c - 16 * k;
    return source >= 0 && source < 16 ? source : 0x80;
  });
}

/** Loads 16 pixels at `address` (a local) into the channel locals `r`, `g`, `b`. */
function loadPixels(address: number, r: number, g: number, b: number): Code {
  const code: Code = [];
  [V0, V1, V2].forEach((local, k) => code.push(...get(address), ...v(simd.load, ...mem(16 * k)), ...set(local)));
  [r, g, b].forEach((channel, c) => {
    code.push(...get(V0), ...vconst(channelMask(c, 0)), ...v(simd.swizzle));
    code.push(...get(V1), ...vconst(channelMask(c, 1)), ...v(simd.swizzle), ...v(simd.or));
    code.push(...get(V2), ...vconst(channelMask(c, 2)), ...v(simd.swizzle), ...v(simd.or));
    code.push(...set(channel));
  });
  return code;
}

/** 16 Y bytes of the pixels in `r`, `g`, `b`: (66 R + 129 G + 25 B + 4224) >> 8, at most 60324 before the shift. */
function luma(r: number, g: number, b: number): Code {
  const code: Code = [];
  for (const extend of [simd.extendLowU, simd.extendHighU]) {
    code.push(...get(r), ...v(extend), ...i16s(66), ...v(simd.mul));
    code.push(...get(g), ...v(extend), ...i16s(129), ...v(simd.mul), ...v(simd.add));
    code.push(...get(b), ...v(extend), ...i16s(25), ...v(simd.mul), ...v(simd.add));
    code.push(...i16s(4224), ...v(simd.add), ...i32(8), ...v(simd.shrU));
  }
  return [...code, ...v(simd.narrowU)];
}

/** One channel's 2 x 2 means of the two rows' 16 pixels, eight 16-bit lanes: (sum + 2) >> 2. */
function blockMean(row0: number, row1: number): Code {
  return [...get(row0), ...v(simd.extaddPairwiseU), ...get(row1), ...v(simd.extaddPairwiseU), ...v(simd.add), ...i16s(2), ...v(simd.add), ...i32(2), ...v(simd.shrU)];
}

/** The 8 blocks' chroma in 16-bit lanes: (kr R + kg G + kb B + 32896) >> 8 of their means, 4336..61456 before the shift. */
function chroma(kr: number, kg: number, kb: number): Code {
  return [
    ...blockMean(R0, R1), ...i16s(kr), ...v(simd.mul),
    ...blockMean(G0, G1), ...i16s(kg), ...v(simd.mul), ...v(simd.add),
    ...blockMean(B0, B1), ...i16s(kb), ...v(simd.mul), ...v(simd.add),
    ...i16s(32896), ...v(simd.add), ...i32(8), ...v(simd.shrU),
  ];
}

function convertBody(): Code {
  const add = (local: number, amount: number): Code => [...get(local), ...i32(amount), op.i32Add, ...set(local)];
  const inner: Code = [
    ...loadPixels(P, R0, G0, B0),
    ...get(YO), ...luma(R0, G0, B0), ...v(simd.store, ...mem()),
    ...loadPixels(Q, R1, G1, B1),
    ...get(YO), ...get(WIDTH), op.i32Add, ...luma(R1, G1, B1), ...v(simd.store, ...mem()),
    // Cb and Cr: one 16-bit vector each, narrowed with itself; lane 0's 8 bytes stored.
    ...get(UO), ...chroma(-38, -74, 112), ...i16s(0), ...v(simd.narrowU), ...v(simd.store64Lane, ...mem(), 0),
    ...get(VO), ...chroma(112, -94, -18), ...i16s(0), ...v(simd.narrowU), ...v(simd.store64Lane, ...mem(), 0),
    ...add(P, 48), ...add(Q, 48), ...add(YO, 16), ...add(UO, 8), ...add(VO, 8),
    ...get(P), ...get(END), op.i32LtU, op.brIf, 0,
  ];
  return [
    ...get(WIDTH), ...i32(3), op.i32Mul, ...set(STRIDE),
    ...get(RGB), ...set(P),
    ...get(OUT), ...set(YO),
    ...get(OUT), ...get(WIDTH), ...get(HEIGHT), op.i32Mul, op.i32Add, ...set(UO),
    ...get(UO), ...get(WIDTH), ...get(HEIGHT), op.i32Mul, ...i32(2), op.i32ShrU, op.i32Add, ...set(VO),
    ...i32(0), ...set(Y),
    op.block, 0x40,
    op.loop, 0x40,
    ...get(Y), ...get(HEIGHT), op.i32GeU, op.brIf, 1,
    ...get(P), ...get(STRIDE), op.i32Add, ...set(Q),
    ...get(Q), ...set(END),
    op.loop, 0x40, ...inner, op.end,
    // p ran to the end of the first row and q to the end of the second: the next pair starts at q.
    ...get(Q), ...set(P),
    ...get(YO), ...get(WIDTH), op.i32Add, ...set(YO),
    ...add(Y, 2),
    op.br, 0,
    op.end,
    op.end,
    op.end,
  ];
}

/** The module: `convert(rgb, out, width, height)` over the imported memory. */
function kernelBytes(): Uint8Array<ArrayBuffer> {
  const body = convertBody();
  // convertBody() ends with the function's own `end`; moduleBytes adds it.
  return moduleBytes({
    exportName: "convert", params: [I32, I32, I32, I32], result: undefined,
    locals: [...Array<typeof I32>(8).fill(I32), ...Array<typeof V128>(9).fill(V128)], body: body.slice(0, -1),
  });
}

let compiled: WebAssembly.Module | null | undefined;

/** The kernel's module, compiled once per process; null where WebAssembly SIMD is missing. */
function simdModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    const bytes = kernelBytes();
    compiled = WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : null;
  }
  return compiled;
}

/** Whether the SIMD kernel takes frames of this size (width a multiple of 16, even height). */
export function simdFits(width: number, height: number): boolean {
  return width >= 16 && width % 16 === 0 && height >= 2 && height % 2 === 0 && simdModule() !== null;
}

/**
 * One frame size's kernel with its own memory: `rgb` (the input, `width * height * 3` bytes) and
 * `outs` (`outputs` yuv420p frames; `out` is the first) are views on it. Fill `rgb`, call
 * `convert(i)`, read `outs[i]`: a caller that hands `outs[i]` on (a pipe write) has no copy to make.
 */
export class SimdYuv420p {
  readonly rgb: Uint8Array;
  readonly outs: readonly Uint8Array[];
  private readonly run: (out: number) => void;

  constructor(readonly width: number, readonly height: number, outputs = 1) {
    const module = simdModule();
    if (!module || !simdFits(width, height)) throw new RangeError(`the SIMD conversion takes widths that are multiples of 16 and even heights; got ${width}x${height}`);
    if (!Number.isInteger(outputs) || outputs < 1) throw new RangeError(`outputs must be a positive integer; got ${outputs}`);
    const rgbBytes = width * height * 3;
    const outBytes = (width * height * 3) / 2;
    const memory = new WebAssembly.Memory({ initial: Math.ceil((rgbBytes + outputs * outBytes + 64) / 65536) });
    const { convert } = new WebAssembly.Instance(module, { env: { memory } }).exports as { convert: (rgb: number, out: number, width: number, height: number) => void };
    this.rgb = new Uint8Array(memory.buffer, 0, rgbBytes);
    this.outs = Array.from({ length: outputs }, (_, i) => new Uint8Array(memory.buffer, rgbBytes + i * outBytes, outBytes));
    this.run = (out) => convert(0, rgbBytes + out * outBytes, width, height);
  }

  /** The first output. */
  get out(): Uint8Array {
    return this.outs[0]!;
  }

  /** Converts `rgb` into `outs[out]` (default the first). */
  convert(out = 0): void {
    this.run(out);
  }
}
