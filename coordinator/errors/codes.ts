/**
 * The spec's fixed list of error codes (section 7) as one table: HTTP status, whether a client
 * may retry, and what to do about it. Nothing else in the coordinator chooses a status code.
 */
export const ERROR_CODES = {
  invalid_api_key: { status: 401, retryable: false, title: "Invalid API key" },
  insufficient_scope: { status: 403, retryable: false, title: "Insufficient scope" },
  not_found: { status: 404, retryable: false, title: "Not found" },
  publish_forbidden: { status: 403, retryable: false, title: "Leaderboard publishing not enabled" },
  rate_limited: { status: 429, retryable: true, title: "Rate limited" },
  contract_validation_failed: { status: 422, retryable: false, title: "Contract validation failed" },
  firmware_pin_unavailable: { status: 422, retryable: false, title: "Firmware pin unavailable" },
  environment_unavailable: { status: 422, retryable: false, title: "Environment unavailable" },
  task_unknown: { status: 422, retryable: false, title: "Task unknown" },
  scenario_format_invalid: { status: 422, retryable: false, title: "Scenario format invalid" },
  episodes_invalid: { status: 422, retryable: false, title: "Episodes invalid" },
  quote_expired: { status: 409, retryable: true, title: "Quote expired" },
  budget_exceeded: { status: 402, retryable: false, title: "Run budget exceeded" },
  monthly_budget_exceeded: { status: 402, retryable: false, title: "Monthly budget exceeded" },
  queue_timeout: { status: 408, retryable: true, title: "Queue timeout" },
  policy_endpoint_timeout: { status: 408, retryable: false, title: "Policy endpoint timeout" },
  estop_triggered: { status: 409, retryable: false, title: "Emergency stop triggered" },
  retention_expired: { status: 410, retryable: false, title: "Retention expired" },
} as const satisfies Record<string, { status: number; retryable: boolean; title: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_CODES, value);
}
