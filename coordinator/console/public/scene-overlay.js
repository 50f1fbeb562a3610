/**
 * The scene a reset asks for, drawn over a camera's picture: each object's target (a dot, its yaw as
 * a line, its tolerance as a circle) projected with the camera's calibration as the cell sent it
 * (`scene.cameras[name]`: CameraCalibration, extrinsics in the cell's world frame). An SVG laid over
 * the <img> with the image's own pixel coordinates as its viewBox, so it scales with the picture.
 */
import { svg } from "./dom.js";

/** Rotates vector v by the inverse of quaternion q = [x, y, z, w] (world -> camera axes). */
function rotateInverse([x, y, z, w], v) {
  // Conjugate: rotation by -angle.
  return rotate([-x, -y, -z, w], v);
}

function rotate([qx, qy, qz, qw], [vx, vy, vz]) {
  // v' = q v q*, expanded.
  const tx = 2 * (qy * vz - qz * vy);
  const ty = 2 * (qz * vx - qx * vz);
  const tz = 2 * (qx * vy - qy * vx);
  return [vx + qw * tx + (qy * tz - qz * ty), vy + qw * ty + (qz * tx - qx * tz), vz + qw * tz + (qx * ty - qy * tx)];
}

/**
 * Pixel [u, v] of a world point on the camera, and pixels per metre there; null when the point is
 * behind a pinhole camera or the calibration is of a kind this does not know.
 */
export function project(calibration, pointM) {
  const ext = calibration?.extrinsics;
  if (!ext || ext.parent_frame !== "world") return null;
  const t = ext.translation_m;
  const [x, y, z] = rotateInverse(ext.rotation_xyzw, [pointM[0] - t[0], pointM[1] - t[1], pointM[2] - t[2]]);
  if (calibration.model === "orthographic" && calibration.metres_per_px > 0) {
    const scale = 1 / calibration.metres_per_px;
    return { u: calibration.width / 2 + x * scale, v: calibration.height / 2 + y * scale, pxPerM: scale };
  }
  if (calibration.model === "pinhole" && z > 1e-6 && calibration.fx > 0) {
    const cx = calibration.cx ?? calibration.width / 2;
    const cy = calibration.cy ?? calibration.height / 2;
    return { u: cx + (calibration.fx * x) / z, v: cy + ((calibration.fy ?? calibration.fx) * y) / z, pxPerM: calibration.fx / z };
  }
  return null;
}

/** The SVG overlay of `scene`'s targets on camera `name`, or null when the cell sent no usable calibration. */
export function sceneOverlay(scene, name = "top") {
  const calibration = scene?.cameras?.[name];
  if (!calibration?.width || !calibration?.height) return null;
  const marks = [];
  for (const [objectName, target] of Object.entries(scene.objects ?? {})) {
    const at = project(calibration, target.position_m);
    if (!at) continue;
    const yaw = target.yaw_rad ?? 0;
    const tip = project(calibration, [target.position_m[0] + 0.03 * Math.cos(yaw), target.position_m[1] + 0.03 * Math.sin(yaw), target.position_m[2]]);
    // At least 8 px, so a tight tolerance stays visible on a small picture.
    const toleranceR = target.tolerance_m ? Math.max(8, target.tolerance_m * at.pxPerM) : null;
    marks.push(svg("g", { class: "target", "data-object": objectName },
      toleranceR ? svg("circle", { class: "tolerance", cx: at.u, cy: at.v, r: toleranceR }) : null,
      svg("circle", { class: "centre", cx: at.u, cy: at.v, r: 4 }),
      tip ? svg("line", { class: "yaw", x1: at.u, y1: at.v, x2: tip.u, y2: tip.v }) : null,
      svg("text", { x: at.u + 10, y: at.v - 10, class: "label" }, objectName)));
  }
  if (marks.length === 0) return null;
  return svg("svg", { class: "scene-overlay", viewBox: `0 0 ${calibration.width} ${calibration.height}`, preserveAspectRatio: "none", role: "img", "aria-label": `Target poses of ${marks.length} object(s) on the ${name} camera` }, ...marks);
}
