/**
 * What the once-per-tick ledger knows of its records in the current term, so a tick costs one
 * store write and no read (issue 29). Per record key, the value the store holds: read once in the
 * term (at its catch-up or first tick), then what our own writes put there. Sound because the
 * record is written only through the ledger, one claim per job at a time, and every write is fenced
 * by the lease: while the term lasts nobody else can write it, and an earlier term's write landed
 * before our acquire, hence before our read. Kept per term (its signal): a new term reads again.
 * A write whose outcome is unknown (an error: its reply may have been lost) is forgotten, so the
 * next attempt reads what landed.
 */
export class TickRecordMemo {
  private readonly known = new Map<string, { signal: AbortSignal; value: unknown }>();

  /** The value under `key` in the term of `signal`, if known; `found: false` means read it. */
  get(key: string, signal: AbortSignal): { found: true; value: unknown } | { found: false } {
    const entry = this.known.get(key);
    if (!entry || entry.signal !== signal || signal.aborted) return { found: false };
    return { found: true, value: entry.value };
  }

  /** `value` (undefined: no record) is what the store holds under `key`, as read or written in the term of `signal`. */
  set(key: string, signal: AbortSignal, value: unknown): void {
    this.known.set(key, { signal, value });
  }

  /** Unknown from now on: a write is on its way, or failed and may have landed. */
  forget(key: string): void {
    this.known.delete(key);
  }
}
