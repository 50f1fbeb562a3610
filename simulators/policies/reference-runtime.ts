/**
 * The simulated cell's PolicyRuntime: it can run the two reference policies, by container image.
 */
import type { PolicyRuntime, PolicySession } from "../../cell-agent/hardware/types.js";
import { embodimentFor } from "../world/embodiments.js";
import { ExpertPolicy } from "./expert-policy.js";
import { NovicePolicy } from "./novice-policy.js";

export const EXPERT_IMAGE = "assay/ref-policy:expert";
export const NOVICE_IMAGE = "assay/ref-policy:novice";

export class ReferencePolicyRuntime implements PolicyRuntime {
  available(): string[] {
    return [EXPERT_IMAGE, NOVICE_IMAGE];
  }

  async start(policy: Record<string, unknown>, robot: { model: string; dof: number }): Promise<PolicySession> {
    const image = policy.image;
    if (image !== EXPERT_IMAGE && image !== NOVICE_IMAGE) {
      throw new Error(`this cell cannot run image ${String(image)}; available: ${this.available().join(", ")}`);
    }
    const embodiment = embodimentFor(robot.model);
    if (embodiment.dof !== robot.dof) {
      throw new Error(`robot ${robot.model} has ${embodiment.dof} joints in the catalog; the run says dof ${robot.dof}`);
    }
    return image === EXPERT_IMAGE ? new ExpertPolicy(embodiment) : new NovicePolicy(embodiment);
  }
}
