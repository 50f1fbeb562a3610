/**
 * The recording's layout is declared once, in protocol/recording/recording-layout.ts (STYLE.md, Layers):
 * the cell agent writes with it and the coordinator reads with it. A topic retyped as a string literal
 * outside that file fails here, naming the file and line.
 */
import assert from "node:assert/strict";
import { CAMERA_TOPIC_PREFIX, RecordingTopic, cameraNameOf, cameraTopic } from "../../protocol/recording/recording-layout.js";
import { findInSources } from "../support/source-scan.js";

const LAYOUT_FILE = "protocol/recording/recording-layout.ts";

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

describe("recording layout", () => {
  it("camera topics and names convert both ways", () => {
    assert.equal(cameraTopic("top"), "/camera/top");
    assert.equal(cameraNameOf("/camera/wrist"), "wrist");
    assert.equal(cameraNameOf(RecordingTopic.cameraSync), null, "/camera_sync is not a camera");
  });

  it("no production file outside protocol/recording retypes a recording topic", () => {
    const topics = [...Object.values(RecordingTopic), CAMERA_TOPIC_PREFIX];
    // A quote or backtick right before the topic: "/joint_states_measured", `/camera/${name}`. The agent's
    // device folders are left out: ROS topics such as "/camera/color/image_raw" are not the recording's.
    const pattern = new RegExp(`["'\`](?:${topics.map(escape).join("|")})`);
    const hits = findInSources(["coordinator", "cell-agent/recording", "cell-agent/episode", "protocol", "scripts"], pattern, (file) => file === LAYOUT_FILE);
    assert.deepEqual(hits, [], `import the topic from ${LAYOUT_FILE} instead`);
  });
});
