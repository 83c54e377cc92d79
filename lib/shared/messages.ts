/** The form of text every store can keep (lib/shared/identity.ts `isStorableText`). */
export const STORABLE_TEXT =
  'well-formed Unicode (no lone surrogate) without control characters (U+0000–U+001F, U+007F–U+009F)';

/**
 * The texts of the shared layer (clock, abort), and the wording election/ and stores/ share. None may
 * include a connection string, account key or SAS: callers pass only names, numbers and redacted messages.
 */
export const sharedMessages = {
  aborted: (reason: unknown) =>
    `store call aborted${reason instanceof Error ? `: ${reason.message}` : reason ? `: ${String(reason)}` : ''}`,
  callTimedOut: (ms: number) => `store call timed out after ${Math.round(ms)} ms`,
  /** How a handover's `to` (and a release's `handoverTo`) must look: an identity every store can keep. */
  identityForm: `a non-empty identity of at most 256 characters, ${STORABLE_TEXT}`,
};
