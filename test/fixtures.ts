/**
 * The README quick start's run body, exactly as the README submits it. Scripts and tests depend on
 * it staying valid; change it only together with README.md.
 */
export const README_RUN_BODY = {
  kind: "run",
  robot: "so101@latest",
  environment: "tabletop@1",
  task: "pick-cube@v1",
  episodes: 20,
  policy: {
    type: "container",
    image: "assay/ref-policy:expert",
    action_space: { type: "joint_position", dim: 6 },
    observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions"] },
  },
} as const;
