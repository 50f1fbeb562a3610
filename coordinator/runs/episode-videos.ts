/**
 * Which camera each video of an episode shows. The agent uploads every camera's episode video
 * (cell-agent/recording/episode-videos.ts): the primary camera's as kind `video` (the Episode's
 * `video_url`) and every other camera's as `video:<camera>`. The primary camera is named in the
 * episode's end /meta (`video_camera`); an episode recorded before that field had one video, of
 * the camera "top" if the cell had one, else of its first camera (the keys of /meta `cameras`).
 */
import { PRIMARY_VIDEO_KIND, cameraOfVideoKind } from "../../protocol/episode-video.js";

/** The camera the episode's `video` artifact shows, from its end /meta. */
export function primaryVideoCamera(meta: Record<string, unknown> | null): string {
  if (typeof meta?.video_camera === "string" && meta.video_camera.length > 0) return meta.video_camera;
  const cameras = meta?.cameras && typeof meta.cameras === "object" ? Object.keys(meta.cameras) : [];
  return cameras.length === 0 || cameras.includes("top") ? "top" : cameras[0]!;
}

/** The camera a video artifact of kind `kind` shows; undefined for a kind that is no video. */
export function videoCameraOf(kind: string, meta: Record<string, unknown> | null): string | undefined {
  if (kind === PRIMARY_VIDEO_KIND) return primaryVideoCamera(meta);
  return cameraOfVideoKind(kind);
}

/** An episode's video artifacts by camera, the primary camera's first. */
export function videosByCamera<A extends { kind: string }>(artifacts: readonly A[], meta: Record<string, unknown> | null): Map<string, A> {
  const byCamera = new Map<string, A>();
  const ordered = [...artifacts].sort((a, b) => Number(b.kind === PRIMARY_VIDEO_KIND) - Number(a.kind === PRIMARY_VIDEO_KIND));
  for (const artifact of ordered) {
    const camera = videoCameraOf(artifact.kind, meta);
    if (camera !== undefined && !byCamera.has(camera)) byCamera.set(camera, artifact);
  }
  return byCamera;
}
