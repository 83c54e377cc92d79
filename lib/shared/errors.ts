/** The typed outcomes of a failed store call; the elector acts on `kind`, never on raw errors. */

/** How the elector treats a failure. */
export type LeaseStoreErrorKind = 'lost' | 'transient' | 'fatal';

/**
 * What a store throws for a failed call, so the elector knows what to do: step down (`lost`), retry
 * until the deadline (`transient`) or report the store unhealthy (`fatal`). Anything else a store
 * throws counts as transient.
 */
export abstract class LeaseStoreError extends Error {
  /** How the elector treats this failure. */
  abstract readonly kind: LeaseStoreErrorKind;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The lease is not (or no longer) ours: step down, then contend as a follower. */
export class LeaseLostError extends LeaseStoreError {
  /** Always `lost`. */
  readonly kind = 'lost';
}

/** Network, timeout, abort, 5xx, throttling: a leader keeps leading until its deadline. */
export class TransientLeaseStoreError extends LeaseStoreError {
  /** Always `transient`. */
  readonly kind = 'transient';
}

/** Authentication, permission or configuration: retrying will not help until someone fixes it. */
export class FatalLeaseStoreError extends LeaseStoreError {
  /** Always `fatal`. */
  readonly kind = 'fatal';
}

/**
 * `requestHandover()` found nobody leading the election: there is nothing to hand over (a leader is
 * elected within the failover bound). Map it to 409 Conflict in an HTTP API.
 */
export class NoLeaderError extends Error {
  constructor(
    /** The election nobody leads. */
    readonly election: string,
    message: string,
  ) {
    super(message);
    this.name = 'NoLeaderError';
  }
}

/** Classify anything a store threw; unknown errors count as transient (retry, never assume). */
export function toLeaseStoreError(error: unknown): LeaseStoreError {
  if (error instanceof LeaseStoreError) return error;
  return new TransientLeaseStoreError(errorMessage(error), { cause: error });
}

/** The message of anything thrown, for a log line. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
