/**
 * Why a person may mark a finished episode invalid at the operator station: the fixed list the
 * API accepts (POST /v1/cells/{cell_id}/invalidate-previous). An invalidated episode is run again
 * and never counted in n; the Result lists it with its reason.
 */
export const INVALID_REASONS = ["scene_wrong", "hardware_fault", "person_in_cell"] as const;

export type InvalidReason = (typeof INVALID_REASONS)[number];

/** The reason in words, for logs and the recorded interruption's detail. */
export const INVALID_REASON_WORDS: Record<InvalidReason, string> = {
  scene_wrong: "the scene was set wrong",
  hardware_fault: "a hardware fault",
  person_in_cell: "a person was in the cell",
};
