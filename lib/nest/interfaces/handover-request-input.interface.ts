/** What {@link LeaderElectionService.requestHandover} asks. */
export interface HandoverRequestInput {
  /** The election to hand over (default: the default election). */
  election?: string;
  /** The identity that should lead next; without it, any other replica (force re-election). */
  to?: string;
  /** Logged by the leader that honours it. Default `operator`. */
  reason?: string;
}
