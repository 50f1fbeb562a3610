/**
 * tf.train.Example in protobuf wire format (tensorflow/core/example/example.proto, feature.proto):
 *
 *   Example  { Features features = 1; }
 *   Features { map<string, Feature> feature = 1; }
 *   Feature  { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3; } }
 *   BytesList { repeated bytes value = 1; }
 *   FloatList { repeated float value = 1 [packed = true]; }
 *   Int64List { repeated int64 value = 1 [packed = true]; }
 *
 * Keys are written sorted so the same episode always serializes to the same bytes.
 */
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";

/** The values of one Example feature, flattened (TFDS stores every tensor as a flat list). */
export type FeatureValues =
  | { kind: "bytes"; values: readonly Uint8Array[] }
  | { kind: "float"; values: readonly number[] }
  | { kind: "int64"; values: readonly (number | bigint)[] };

export type FeatureKind = FeatureValues["kind"];

/** Serializes a tf.train.Example holding `features` (flat key -> values). */
export function encodeExample(features: ReadonlyMap<string, FeatureValues>): Uint8Array {
  const writer = new BinaryWriter();
  writer.tag(1, WireType.LengthDelimited).fork(); // Example.features
  for (const key of [...features.keys()].sort()) {
    writer.tag(1, WireType.LengthDelimited).fork(); // Features.feature map entry
    writer.tag(1, WireType.LengthDelimited).string(key);
    writer.tag(2, WireType.LengthDelimited).fork();
    writeFeature(writer, features.get(key)!);
    writer.join();
    writer.join();
  }
  writer.join();
  return writer.finish();
}

function writeFeature(writer: BinaryWriter, feature: FeatureValues): void {
  switch (feature.kind) {
    case "bytes":
      writer.tag(1, WireType.LengthDelimited).fork();
      for (const value of feature.values) writer.tag(1, WireType.LengthDelimited).bytes(value);
      writer.join();
      return;
    case "float":
      // The oneof is set even when the list is empty (an empty sequence), as TFDS writes it.
      writer.tag(2, WireType.LengthDelimited).fork();
      if (feature.values.length > 0) writer.tag(1, WireType.LengthDelimited).bytes(packedFloat32(feature.values));
      writer.join();
      return;
    case "int64":
      writer.tag(3, WireType.LengthDelimited).fork();
      if (feature.values.length > 0) {
        writer.tag(1, WireType.LengthDelimited).fork();
        for (const value of feature.values) writer.int64(value);
        writer.join();
      }
      writer.join();
      return;
  }
}

/** A packed `repeated float`: the values as consecutive little-endian IEEE 754 singles. */
function packedFloat32(values: readonly number[]): Uint8Array {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i], true);
  return bytes;
}
