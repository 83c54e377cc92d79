// Issue 16: the `tick:` keys hold the once-per-tick ledger. The public writeState of the Elector
// and of the testing kit refuses them, before any store call; the ledger's own path still writes.
import { TestingElector } from '../../lib/testing/testing.elector.js';
import { useElectorFixture } from './elector-fixture.js';

const RESERVED = /key "tick:[^"]*" is reserved: keys starting with "tick:" hold the library's once-per-tick records/;

describe('the tick: key namespace is reserved', () => {
  const fx = useElectorFixture();

  it('Elector.writeState refuses tick: keys with a TypeError; writeTickRecord (the ledger) writes them', async () => {
    const a = fx.elector('a');
    await a.start();
    expect(a.isLeader()).toBe(true);
    const writes = spyWrites(fx.memory);
    for (const key of ['tick:', 'tick:Reports.daily']) {
      const error = await a.writeState(1, key).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(RESERVED);
    }
    expect(writes.count).toBe(0);
    expect(await a.readState('tick:Reports.daily')).toBeUndefined();
    await a.writeTickRecord(1_700_000_000_000, 'tick:Reports.daily');
    expect((await a.readState('tick:Reports.daily'))?.value).toBe(1_700_000_000_000);
    // Keys that merely contain "tick" are the app's.
    await a.writeState(7, 'ticks');
    await a.writeState(8, 'job:tick:');
    expect(writes.count).toBe(3);
  });

  it('the testing kit refuses them the same way', async () => {
    const kit = new TestingElector('e', 'me', true);
    await kit.start();
    const error = await kit.writeState({ hacked: true }, 'tick:job').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(RESERVED);
    await kit.writeTickRecord(5, 'tick:job');
    expect((await kit.readState('tick:job'))?.value).toBe(5);
  });
});

/** Counts the store's state writes (to show a refusal never reaches it). */
function spyWrites(store: { writeState: (...args: never[]) => Promise<void> }): { count: number } {
  const counter = { count: 0 };
  const original = store.writeState.bind(store);
  store.writeState = (...args: never[]) => {
    counter.count += 1;
    return original(...args);
  };
  return counter;
}
