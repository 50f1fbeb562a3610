/**
 * The openpi msgpack-numpy codec: known answers written out from the MessagePack spec and numpy's
 * `tobytes()` for what openpi-client's msgpack_numpy.py packs, and round trips against msgpackr
 * (an independent codec) on the same bytes, both ways.
 */
import assert from "node:assert/strict";
import { Packr, Unpackr } from "msgpackr";
import { NdArray, packOpenpi, unpackOpenpi } from "../../protocol/policy/openpi/msgpack-numpy.js";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const text = (s: string) => Buffer.from(s).toString("hex");
/** bin8 of an ASCII key: c4 <len> <bytes>. */
const binKey = (s: string) => `c4${s.length.toString(16).padStart(2, "0")}${text(s)}`;

const unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false });
const packr = new Packr({ useRecords: false });

/** A numpy ndarray map as msgpack_numpy.pack_array builds it: bin keys. */
function pyArray(dtype: string, shape: number[], data: Uint8Array): Map<Buffer, unknown> {
  return new Map<Buffer, unknown>([
    [Buffer.from("__ndarray__"), true], [Buffer.from("data"), Buffer.from(data)], [Buffer.from("dtype"), dtype], [Buffer.from("shape"), shape],
  ]);
}

function bytesOf(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

describe("openpi msgpack-numpy", () => {
  it("packs {actions: float32 [[0.5, -1]]} byte for byte as msgpack_numpy.packb does", () => {
    const expected = [
      "81", `a7${text("actions")}`, // fixmap 1, fixstr "actions"
      "84", binKey("__ndarray__"), "c3", // the array's map: bin keys, true
      binKey("data"), "c408", "0000003f000080bf", // np.float32 [[0.5, -1.0]].tobytes()
      binKey("dtype"), `a3${text("<f4")}`,
      binKey("shape"), "920102", // the shape tuple (1, 2) as an array
    ].join("");
    assert.equal(hex(packOpenpi({ actions: NdArray.float32([1, 2], [0.5, -1]) })), expected);
  });

  it("unpacks an openpi server's reply: actions <f8 and the server_timing it adds", () => {
    const reply = Buffer.from([
      "82", `a7${text("actions")}`, "84", binKey("__ndarray__"), "c3", binKey("data"), "c410", "000000000000f03f0000000000000040",
      binKey("dtype"), `a3${text("<f8")}`, binKey("shape"), "920102",
      `ad${text("server_timing")}`, "81", `a8${text("infer_ms")}`, "cb4029000000000000",
    ].join(""), "hex");
    const decoded = unpackOpenpi(reply) as { actions: NdArray; server_timing: { infer_ms: number } };
    assert.ok(decoded.actions instanceof NdArray);
    assert.equal(decoded.actions.dtype, "<f8");
    assert.deepEqual(decoded.actions.shape, [1, 2]);
    assert.deepEqual(decoded.actions.toNumbers(), [1, 2]);
    assert.deepEqual(decoded.server_timing, { infer_ms: 12.5 });
  });

  it("unpacks a numpy scalar (np.generic) to its plain value", () => {
    const scalar = Buffer.from(["83", binKey("__npgeneric__"), "c3", binKey("data"), "cb3ff8000000000000", binKey("dtype"), `a3${text("<f4")}`].join(""), "hex");
    assert.deepEqual(unpackOpenpi(Buffer.concat([Buffer.from(`81a1${text("x")}`, "hex"), scalar])), { x: 1.5 });
  });

  const cases: Array<{ name: string; array: NdArray }> = [
    { name: "<f4 [2, 3]", array: NdArray.float32([2, 3], [0, 1.5, -2, 3.25, Number.NaN, Infinity]) },
    { name: "<f8 [3]", array: new NdArray("<f8", [3], Float64Array.from([Math.PI, -0, 1e300])) },
    { name: "|u1 [2, 2, 3] (an image)", array: NdArray.uint8([2, 2, 3], Uint8Array.from({ length: 12 }, (_, i) => i * 20)) },
    { name: "<i8 [2]", array: new NdArray("<i8", [2], BigInt64Array.from([-5n, 2n ** 40n])) },
    { name: "<i4 [1, 1]", array: new NdArray("<i4", [1, 1], Int32Array.from([-7])) },
    { name: "<u2 [3]", array: new NdArray("<u2", [3], Uint16Array.from([0, 1, 65535])) },
    { name: "|b1 [2]", array: new NdArray("|b1", [2], Uint8Array.from([1, 0])) },
    { name: "<f4 [] (0-d)", array: NdArray.float32([], [42]) },
    { name: "<f4 [0, 6] (empty)", array: NdArray.float32([0, 6], []) },
  ];

  for (const { name, array } of cases) {
    it(`${name}: ours -> msgpackr reads bin keys, dtype, shape and numpy's bytes`, () => {
      const decoded = unpackr.unpack(packOpenpi({ outer: { inner: array }, prompt: "pick" })) as Map<string, Map<string, Map<unknown, unknown>>>;
      assert.equal(decoded.get("prompt"), "pick");
      const map = decoded.get("outer")!.get("inner")!;
      const entries = new Map([...map].map(([k, v]) => [k instanceof Uint8Array ? `bin:${Buffer.from(k).toString()}` : `str:${String(k)}`, v]));
      assert.deepEqual([...entries.keys()], ["bin:__ndarray__", "bin:data", "bin:dtype", "bin:shape"]);
      assert.equal(entries.get("bin:__ndarray__"), true);
      assert.equal(entries.get("bin:dtype"), array.dtype);
      assert.deepEqual(entries.get("bin:shape"), [...array.shape]);
      assert.equal(hex(entries.get("bin:data") as Uint8Array), hex(bytesOf(array.data)));
    });

    it(`${name}: msgpackr -> ours gives the same array`, () => {
      const bytes = packr.pack(new Map<string, unknown>([["nested", new Map([["a", pyArray(array.dtype, [...array.shape], bytesOf(array.data))]])]]));
      const decoded = (unpackOpenpi(bytes) as { nested: { a: NdArray } }).nested.a;
      assert.ok(decoded instanceof NdArray);
      assert.equal(decoded.dtype, array.dtype);
      assert.deepEqual(decoded.shape, array.shape);
      assert.equal(decoded.data.constructor, array.data.constructor);
      assert.equal(hex(decoded.bytes()), hex(bytesOf(array.data)));
    });
  }

  it("reads big-endian and float16 arrays as numpy would, and keeps string arrays as raw bytes", () => {
    const bytes = packr.pack({
      big: pyArray(">f4", [2], Buffer.from("3fc00000c0000000", "hex")),
      half: pyArray("<f2", [2], Buffer.from("003e00c0", "hex")),
      words: pyArray("<U2", [1], Buffer.from("6100000062000000", "hex")),
    });
    const decoded = unpackOpenpi(bytes) as Record<string, NdArray>;
    assert.deepEqual([decoded.big.dtype, decoded.big.toNumbers()], ["<f4", [1.5, -2]]);
    assert.deepEqual([decoded.half.dtype, decoded.half.toNumbers()], ["<f4", [1.5, -2]]);
    assert.equal(decoded.words.isNumeric, false);
    assert.equal(hex(decoded.words.bytes()), "6100000062000000");
  });

  it("accepts the array markers as str keys too (a lenient peer)", () => {
    const bytes = packr.pack({ a: { __ndarray__: true, data: Buffer.from("0000803f", "hex"), dtype: "<f4", shape: [1] } });
    assert.deepEqual((unpackOpenpi(bytes) as { a: NdArray }).a.toNumbers(), [1]);
  });

  it("refuses bytes that are not MessagePack, and an array whose bytes do not fit its shape", () => {
    assert.throws(() => unpackOpenpi(Buffer.from("{\"action\": [1]}")), /Extra|Insufficient|invalid|Unrecognized/i);
    assert.throws(() => unpackOpenpi(packr.pack({ a: pyArray("<f4", [3], Buffer.alloc(8)) })), /needs 12 bytes; got 8/);
  });

  it("NdArray refuses elements that do not match its dtype or shape", () => {
    assert.throws(() => new NdArray("<f4", [2], Float64Array.from([1, 2])), /Float32Array/);
    assert.throws(() => NdArray.float32([2, 2], [1, 2, 3]), /4 elements; got 3/);
  });
});
