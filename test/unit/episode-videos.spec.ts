/**
 * Which camera each episode video shows: `video` is the camera the end /meta names (`video_camera`),
 * and for episodes recorded before that field, the one the agent then chose (top, else its first
 * camera); `video:<camera>` names its camera.
 */
import assert from "node:assert/strict";
import { primaryVideoCamera, videosByCamera } from "../../coordinator/runs/episode-videos.js";

describe("episode videos by camera", () => {
  it("names the primary video's camera from /meta, or as older agents chose it", () => {
    assert.equal(primaryVideoCamera({ video_camera: "wrist", cameras: { top: null, wrist: null } }), "wrist");
    assert.equal(primaryVideoCamera({ cameras: { wrist: null, top: null } }), "top");
    assert.equal(primaryVideoCamera({ cameras: { side: null, wrist: null } }), "side", "no top camera: the cell's first");
    assert.equal(primaryVideoCamera(null), "top");
  });

  it("maps video and video:<camera> artifacts to cameras and leaves other kinds out", () => {
    const artifacts = [{ kind: "mcap" }, { kind: "video:wrist" }, { kind: "ground_truth" }, { kind: "video" }, { kind: "video:" }];
    const byCamera = videosByCamera(artifacts, { video_camera: "top" });
    assert.deepEqual([...byCamera].map(([camera, a]) => [camera, a.kind]), [["top", "video"], ["wrist", "video:wrist"]]);
  });
});
