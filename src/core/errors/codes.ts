/**
 * Every error code Spillway can raise. Codes are stable API: never renamed, never reused.
 * `docs/errors.md` has one heading per code; keep both in step (a test checks it).
 *
 * @module
 */

export const errorCodes = Object.freeze({
  /** An option passed to a factory is missing, of the wrong type or out of range. */
  invalidOption: 'SPILLWAY_E_INVALID_OPTION',
  /** An argument passed to a method is out of range (e.g. `tryTake(0)`). */
  invalidArgument: 'SPILLWAY_E_INVALID_ARGUMENT',
  /** A client's quota is spent; retry after `retryAfterMs`. */
  rateLimited: 'SPILLWAY_E_RATE_LIMITED',
  /** Every slot is taken and the line is full. */
  queueFull: 'SPILLWAY_E_QUEUE_FULL',
  /** A waiter spent its whole `maxQueueWaitMs` in line (or was dropped by CoDel). */
  queueTimeout: 'SPILLWAY_E_QUEUE_TIMEOUT',
  /** The deadline passed, or would pass before the work could start. */
  deadline: 'SPILLWAY_E_DEADLINE',
  /** The caller's signal aborted. */
  aborted: 'SPILLWAY_E_ABORTED',
  /** A waiter was displaced by more critical work. */
  shed: 'SPILLWAY_E_SHED',
  /** A dependency refused (429/503) or is overloaded; `signal` says what to do upstream. */
  overloaded: 'SPILLWAY_E_OVERLOADED',
  /** The caller's retry budget for a dependency is spent; do not retry at any layer. */
  retryBudget: 'SPILLWAY_E_RETRY_BUDGET',
  /** The caller's circuit breaker for a dependency is open (or its half-open probes are taken). */
  circuitOpen: 'SPILLWAY_E_CIRCUIT_OPEN',
  /** The caller's adaptive throttle refused the call locally: the dependency refuses most calls. */
  throttled: 'SPILLWAY_E_THROTTLED',
  /** One attempt took longer than its `timeoutMs` and was cancelled. */
  dependencyTimeout: 'SPILLWAY_E_DEPENDENCY_TIMEOUT',
  /** The dependency could not be reached (connection refused, reset, DNS failure). */
  unreachable: 'SPILLWAY_E_UNREACHABLE',
  /** A shared store (Redis) could not be asked and its failure policy is `closed`. */
  storeUnavailable: 'SPILLWAY_E_STORE_UNAVAILABLE',
  /** A pacing or credit line of waiters (`maxWaiting`) is full; nothing was taken. */
  waitLineFull: 'SPILLWAY_E_WAIT_LINE_FULL',
  /** A credit gate was cancelled by its receiver or completed by its sender; nothing moves. */
  gateClosed: 'SPILLWAY_E_GATE_CLOSED',
  /** A consumer's backlog is full: a lag gate or the broker refused a message; retry later. */
  backlogFull: 'SPILLWAY_E_BACKLOG_FULL',
  /** RabbitMQ blocks the publishing connection (a memory or disk alarm); nothing was sent. */
  brokerBlocked: 'SPILLWAY_E_BROKER_BLOCKED',
} as const);

/** The union of every code in {@link errorCodes}. */
export type SpillwayErrorCode = (typeof errorCodes)[keyof typeof errorCodes];
