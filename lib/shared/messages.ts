/**
 * The texts of the shared layer (clock, abort). `lib/messages/leader-election.messages.ts` spreads them
 * into its `messages`, so every text is still found there; they live here so shared/ imports nothing
 * above it.
 */
export const sharedMessages = {
  aborted: (reason: unknown) =>
    `store call aborted${reason instanceof Error ? `: ${reason.message}` : reason ? `: ${String(reason)}` : ''}`,
  callTimedOut: (ms: number) => `store call timed out after ${Math.round(ms)} ms`,
};
