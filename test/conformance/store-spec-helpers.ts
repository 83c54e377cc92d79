// Helpers our store specs share beside the exported conformance suite (lib/conformance/): option
// checks and the upgrade halves of leader state, which need a store's own schema to set up.
import type { StateCapableStore } from '../../lib/stores/lease-store.capabilities.js';
import type { Lease } from '../../lib/stores/lease-store.js';

const CALL_TIMEOUT_MS = 10_000;

/**
 * A malformed connection string fails at construction — a TypeError naming `option`, never echoing
 * the string (its password) — rather than on first use as a "transient" failure retried forever.
 */
export function expectMalformedConnectionRefused(make: () => unknown, option: string, secret: string): void {
  let error: unknown;
  try {
    make();
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(TypeError);
  const { message, cause } = error as TypeError;
  expect(message).toContain(`${option} is not a valid connection string`);
  expect(message).not.toContain(secret);
  expect(cause).toBeUndefined();
}

/**
 * Upgrade tests of leader state, first half: `writer`, leading with `lease`, writes a value and a
 * tick record, then releases. Returns how any replica (`reader`) reads both back and what it must
 * keep reading whatever a previous-version replica does with the lease next.
 */
export async function stateWrittenBeforeUpgrade(
  writer: StateCapableStore,
  reader: StateCapableStore,
  lease: Lease,
): Promise<{ read: () => Promise<unknown[]>; expected: unknown[] }> {
  const signal = () => AbortSignal.timeout(CALL_TIMEOUT_MS);
  await writer.writeState(lease, { cursor: 41 }, { signal: signal() });
  await writer.writeState(lease, 1_700_000_000_000, { signal: signal(), key: 'tick:job' });
  await writer.release(lease, { signal: signal() });
  const read = async () => [
    await reader.readState(lease.election, { signal: signal() }),
    await reader.readState(lease.election, { signal: signal(), key: 'tick:job' }),
  ];
  const expected = [
    { value: { cursor: 41 }, term: lease.term },
    { value: 1_700_000_000_000, term: lease.term },
  ];
  expect(await read()).toEqual(expected);
  return { read, expected };
}

/** Second half: a new leader (`writer`, with `lease`) continues from that state; `reader` sees it. */
export async function stateContinuesAfterUpgrade(
  writer: StateCapableStore,
  reader: StateCapableStore,
  lease: Lease,
): Promise<void> {
  const signal = () => AbortSignal.timeout(CALL_TIMEOUT_MS);
  await writer.writeState(lease, { cursor: 42 }, { signal: signal() });
  expect(await reader.readState(lease.election, { signal: signal() })).toEqual({
    value: { cursor: 42 },
    term: lease.term,
  });
  await writer.release(lease, { signal: signal() });
}
