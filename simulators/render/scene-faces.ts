/**
 * The moving faces of a scene (the objects and the posed arm), built once for every camera of a cell
 * that draws the same scene. A simulated cell's cameras capture at the same simulated instant, each
 * from its own snapshot of the world, so without this each camera built the same ~150 faces (their
 * vertex arrays and normals) again: a few per cent of a frame and most of what is left of the
 * renderer's garbage.
 *
 * The cache compares by value every input the faces are made of (arm vector, opening, each object's
 * position, yaw and shape), so a scene from another snapshot with the same pose gets the same faces
 * and any change rebuilds them. NOTE: the faces it returns are shared; callers only read them.
 */
import type { SimObject } from "../world/objects.js";
import { armFaces } from "./robot-geometry.js";
import { objectFaces } from "./scene-geometry.js";
import type { Face } from "./solids.js";

export class SceneFaces {
  private armKey: number[] = [];
  private arm: Face[] | undefined;
  private objectsKey: unknown[] = [];
  private objects: Face[] | undefined;

  /** The posed arm's faces (robot-geometry.ts `armFaces`). */
  armFaces(arm: readonly number[], opening: number): Face[] {
    const key = this.armKey;
    let same = this.arm !== undefined && key.length === arm.length + 1 && key[arm.length] === opening;
    for (let i = 0; same && i < arm.length; i++) same = key[i] === arm[i];
    if (same) return this.arm!;
    this.armKey = [...arm, opening];
    return (this.arm = armFaces(arm, opening));
  }

  /** The objects' faces (scene-geometry.ts `objectFaces`). */
  objectFaces(objects: readonly SimObject[]): Face[] {
    const key = this.objectsKey;
    const fields = 11;
    let same = this.objects !== undefined && key.length === objects.length * fields;
    for (let i = 0; same && i < objects.length; i++) {
      const o = objects[i]!;
      const { footprint, halfXM, halfYM, heightM, colour } = o.shape;
      const k = i * fields;
      same = key[k] === o.positionM[0] && key[k + 1] === o.positionM[1] && key[k + 2] === o.positionM[2] && key[k + 3] === o.yawRad
        && key[k + 4] === footprint && key[k + 5] === halfXM && key[k + 6] === halfYM && key[k + 7] === heightM
        && key[k + 8] === colour[0] && key[k + 9] === colour[1] && key[k + 10] === colour[2];
    }
    if (same) return this.objects!;
    this.objectsKey = objects.flatMap((o) => [...o.positionM, o.yawRad, o.shape.footprint, o.shape.halfXM, o.shape.halfYM, o.shape.heightM, ...o.shape.colour]);
    return (this.objects = objectFaces(objects));
  }
}
