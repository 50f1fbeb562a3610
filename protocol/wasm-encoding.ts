/**
 * The binary encoding of a WebAssembly module with one exported function and an imported memory
 * (WebAssembly Core Specification 2.0, chapter 5), enough for the kernels assembled from their
 * instructions at load (the rasterizer's fill, simulators/render/polygon-fill-wasm.ts; the episode
 * video's RGB to yuv420p conversion, cell-agent/recording/rgb-to-yuv420p-simd.ts): no toolchain, no
 * binary in the repository. Instructions are byte arrays; `op` names single-byte opcodes, and a
 * kernel's SIMD instructions are `v(number, ...immediates)`.
 */

/** The bytes of one instruction sequence. */
export type Code = number[];

export const type = { i32: 0x7f, f64: 0x7c, v128: 0x7b } as const;
export type ValueType = (typeof type)[keyof typeof type];

/** Opcodes (single byte) used by the kernel. */
export const op = {
  block: 0x02, loop: 0x03, if: 0x04, else: 0x05, end: 0x0b, br: 0x0c, brIf: 0x0d, return: 0x0f, select: 0x1b,
  localGet: 0x20, localSet: 0x21, localTee: 0x22,
  f32Load: 0x2a, f64Load: 0x2b, f32Store: 0x38, i32Store8: 0x3a,
  i32Const: 0x41, f64Const: 0x44,
  i32GeS: 0x4e, i32LeS: 0x4c, i32LtS: 0x48, i32LeU: 0x4d,
  f64Eq: 0x61, f64Lt: 0x63, f64Gt: 0x64, f64Le: 0x65,
  i32Add: 0x6a, i32Sub: 0x6b, i32Mul: 0x6c, i32And: 0x71, i32Or: 0x72, i32Shl: 0x74,
  f64Abs: 0x99, f64Ceil: 0x9b, f64Floor: 0x9c, f64Nearest: 0x9e,
  f64Add: 0xa0, f64Sub: 0xa1, f64Mul: 0xa2, f64Div: 0xa3, f64Min: 0xa4, f64Max: 0xa5,
  i32TruncF64S: 0xaa, f32DemoteF64: 0xb6, f64ConvertI32S: 0xb7, f64PromoteF32: 0xbb,
} as const;

/** Block type of a block, loop or if that leaves nothing on the stack. */
export const VOID = 0x40;

/** `i32.trunc_sat_f64_u`: NaN and negatives to 0, large values to 2^32 - 1 (never traps). */
export const i32TruncSatF64U: Code = [0xfc, 0x03];

/** SIMD instructions (prefix 0xfd): their numbers. */
export const simd = {
  const: 0x0c, swizzle: 0x0e, f64x2Splat: 0x14, f64x2ReplaceLane: 0x22, store8Lane: 0x58, store16Lane: 0x59, load32Zero: 0x5c, load64Zero: 0x5d,
  f64x2PromoteLowF32x4: 0x5f, i8x16NarrowI16x8U: 0x66, i16x8NarrowI32x4S: 0x85,
  f64x2Nearest: 0x94, f64x2Add: 0xf0, f64x2Mul: 0xf2, i32x4TruncSatF64x2SZero: 0xfc,
} as const;

/** A SIMD instruction with its immediates. */
export const v = (instruction: number, ...immediates: number[]): Code => [0xfd, ...uleb(instruction), ...immediates];

export function uleb(value: number): Code {
  const bytes: Code = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    bytes.push(byte);
  } while (value !== 0);
  return bytes;
}

export function sleb(value: number): Code {
  const bytes: Code = [];
  for (;;) {
    const byte = value & 0x7f;
    value >>= 7;
    if ((value === 0 && (byte & 0x40) === 0) || (value === -1 && (byte & 0x40) !== 0)) return [...bytes, byte];
    bytes.push(byte | 0x80);
  }
}

export const get = (local: number): Code => [op.localGet, ...uleb(local)];
export const set = (local: number): Code => [op.localSet, ...uleb(local)];
export const tee = (local: number): Code => [op.localTee, ...uleb(local)];
export const i32 = (value: number): Code => [op.i32Const, ...sleb(value)];
export const f64 = (value: number): Code => [op.f64Const, ...new Uint8Array(new Float64Array([value]).buffer)];
/** memarg: alignment exponent `align`, byte `offset`. */
export const mem = (align: number, offset = 0): Code => [align, ...uleb(offset)];

function section(id: number, content: Code): Code {
  return [id, ...uleb(content.length), ...content];
}

function vector(items: Code[]): Code {
  return [...uleb(items.length), ...items.flat()];
}

function name(text: string): Code {
  const bytes = [...Buffer.from(text, "utf8")];
  return [...uleb(bytes.length), ...bytes];
}

export interface FunctionModule {
  /** Exported name of the function. */
  exportName: string;
  params: ValueType[];
  /** The function's result; none when undefined. */
  result: ValueType | undefined;
  /** Locals after the parameters, in order. */
  locals: ValueType[];
  body: Code;
}

/** A module importing `env.memory` (at least one page) and exporting one function. */
export function moduleBytes(fn: FunctionModule): Uint8Array<ArrayBuffer> {
  const localGroups: Code[] = fn.locals.map((t) => [1, t]);
  const body = [...vector(localGroups), ...fn.body, op.end];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vector([[0x60, ...vector(fn.params.map((t) => [t])), ...vector(fn.result === undefined ? [] : [[fn.result]])]])),
    ...section(2, vector([[...name("env"), ...name("memory"), 0x02, 0x00, 0x01]])),
    ...section(3, vector([[0x00]])),
    ...section(7, vector([[...name(fn.exportName), 0x00, 0x00]])),
    ...section(10, vector([[...uleb(body.length), ...body]])),
  ]);
}
