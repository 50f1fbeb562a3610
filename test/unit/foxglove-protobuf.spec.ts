/**
 * The recording's hand-written protobuf against a reference: @bufbuild/protobuf builds a registry from
 * the FileDescriptorSets the recording stores as schema data (as Foxglove Studio does from the same
 * bytes) and decodes the hand-encoded messages with it.
 */
import { strict as assert } from "node:assert";
import { createFileRegistry, fromBinary, toBinary, create, type DescMessage } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import {
  COMPRESSED_IMAGE, compressedImageData, decodeCompressedImage, encodeCompressedImage, encodeFrameTransforms, FOXGLOVE_DESCRIPTOR_SETS, FRAME_TRANSFORMS,
} from "../../protocol/recording/foxglove-protobuf.js";

function messageOf(name: typeof COMPRESSED_IMAGE | typeof FRAME_TRANSFORMS): DescMessage {
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, FOXGLOVE_DESCRIPTOR_SETS[name]));
  const desc = registry.getMessage(name);
  assert.ok(desc, `${name} is in its own descriptor set`);
  return desc;
}

describe("foxglove protobuf schemas", () => {
  it("CompressedImage: the descriptor has Foxglove's field numbers and the reference decodes our bytes", () => {
    const desc = messageOf(COMPRESSED_IMAGE);
    assert.deepEqual(desc.fields.map((f) => [f.name, f.number]), [["timestamp", 1], ["frame_id", 4], ["data", 2], ["format", 3]]);
    const data = Uint8Array.from([0xff, 0xd8, 0xff, 0xdb, 0, 1, 2, 0xff, 0xd9]);
    const bytes = encodeCompressedImage({ timestamp: { sec: 1_700_000_000, nsec: 123_456_789 }, frameId: "top", data, format: "jpeg" });
    const decoded = fromBinary(desc, bytes) as any;
    assert.equal(decoded.timestamp.seconds, 1_700_000_000n);
    assert.equal(decoded.timestamp.nanos, 123_456_789);
    assert.deepEqual([decoded.frameId, decoded.format, Buffer.from(decoded.data)], ["top", "jpeg", Buffer.from(data)]);
    // And ours reads what the reference writes.
    const reference = toBinary(desc, create(desc, { timestamp: { seconds: 5n, nanos: 7 }, frameId: "wrist", data, format: "jpeg" } as any));
    assert.deepEqual(decodeCompressedImage(reference), { timestamp: { sec: 5, nsec: 7 }, frameId: "wrist", data, format: "jpeg" });
    // The exports' reader takes the image bytes alone, from ours and the reference's.
    assert.deepEqual([Buffer.from(compressedImageData(bytes)), Buffer.from(compressedImageData(reference))], [Buffer.from(data), Buffer.from(data)]);
  });

  it("FrameTransforms: the reference decodes every transform", () => {
    const desc = messageOf(FRAME_TRANSFORMS);
    const bytes = encodeFrameTransforms([
      { timestamp: { sec: 2, nsec: 0 }, parentFrameId: "base_link", childFrameId: "shoulder_link", translation: [0, 0, 0.1], rotation: [0, 0, Math.sin(0.25), Math.cos(0.25)] },
      { timestamp: { sec: 2, nsec: 0 }, parentFrameId: "shoulder_link", childFrameId: "upper_arm_link", translation: [0, 0, 0], rotation: [0, 0, 0, 1] },
    ]);
    const decoded = fromBinary(desc, bytes) as any;
    assert.equal(decoded.transforms.length, 2);
    const [a, b] = decoded.transforms;
    assert.deepEqual([a.parentFrameId, a.childFrameId, a.timestamp.seconds], ["base_link", "shoulder_link", 2n]);
    assert.deepEqual([a.translation.x, a.translation.y, a.translation.z], [0, 0, 0.1]);
    assert.deepEqual([a.rotation.x, a.rotation.y, a.rotation.z, a.rotation.w], [0, 0, Math.sin(0.25), Math.cos(0.25)]);
    assert.deepEqual([b.rotation.w, b.translation.z], [1, 0]);
  });
});
