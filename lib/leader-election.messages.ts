/**
 * Every user-facing text in one place. None of them may include a connection string, account
 * key or SAS: callers pass only names, numbers and already-redacted error messages.
 */
export const messages = {
  // Option validation (thrown at construction / app startup).
  optionRequired: (option: string, what: string) => `${option} is required: ${what}`,
  optionNotPositive: (option: string, value: unknown) =>
    `${option} must be a positive finite number of milliseconds (got ${String(value)})`,
  optionOrder: (option: string, value: number, lower: string, lowerValue: number, upper: string, upperValue: number) =>
    `${option} must be greater than ${lower} (${lowerValue}) and less than ${upper} (${upperValue}); got ${value}`,
  leaseDurationOutOfRange: (store: string, value: number, min: number, max: number, reason: string) =>
    `leaseDurationMs must be between ${min} and ${max} ms (${formatSeconds(min)}–${formatSeconds(max)}) for ${store}: ${reason}; got ${value}`,
  leaseDurationStep: (store: string, value: number, step: number) =>
    `leaseDurationMs must be a multiple of ${step} ms for ${store}; got ${value}`,
  invalidIdentity: (value: unknown) => `identity must be a non-empty string of at most 256 characters (got ${JSON.stringify(value)})`,
  invalidElection: (value: unknown) =>
    `election must be a non-empty string of at most 200 letters, digits, '.', '_' or '-' (got ${JSON.stringify(value)})`,

  // Store outcomes.
  leaseLost: (election: string) => `the lease of election "${election}" is no longer ours`,
  aborted: (reason: unknown) =>
    `store call aborted${reason instanceof Error ? `: ${reason.message}` : reason ? `: ${String(reason)}` : ''}`,

  // Elector log lines.
  elected: (election: string, identity: string, term: number) =>
    `${identity} is now the leader of "${election}" (term ${term})`,
  revoked: (election: string, identity: string, term: number, reason: string) =>
    `${identity} stopped leading "${election}" (term ${term}): ${reason}`,
  leaderChanged: (election: string, leaderId: string | undefined) =>
    leaderId ? `leader of "${election}" is ${leaderId}` : `"${election}" has no known leader`,
  storeFailing: (election: string, store: string, kind: string, message: string) =>
    `leader election "${election}": ${store} ${kind === 'fatal' ? 'refused the request' : 'is unreachable or failing'} — staying a follower until it answers: ${message}`,
  storeStillFailing: (election: string, store: string, attempts: number) =>
    `leader election "${election}": ${store} has failed ${attempts} consecutive calls`,
  storeRecovered: (election: string, store: string) => `leader election "${election}": ${store} answers again`,
  renewFailed: (election: string, message: string, remainingMs: number) =>
    `leader election "${election}": renew failed (${message}); still leading for at most ${Math.max(0, Math.round(remainingMs))} ms`,
  releaseFailed: (election: string, message: string) =>
    `leader election "${election}": release failed (${message}); the lease will expire on its own`,
  watchFailed: (election: string, message: string) =>
    `leader election "${election}": release notifications unavailable (${message}); polling instead`,

  // Revocation reasons (the `reason` of a 'revoked' event).
  reasonDeadline: 'renew deadline passed without a successful renewal',
  reasonLost: 'the store says the lease is no longer ours',
  reasonResigned: 'resigned',
  reasonStopped: 'stopped',
} as const;

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
