// Issue 24, defect 6: an identity a store cannot carry (U+0000 on PostgreSQL, a lone surrogate on
// Azure) used to become a silent retry loop: every acquire failed, the replica never led, and
// nothing said why at startup. Identities, `advertise` and a reservation's `handoverTo` are checked
// where they enter: well-formed Unicode, no control characters, non-empty, at most 256 characters.
import { Elector, type ElectorOptions } from '../../lib/election/elector.js';
import { resolveModuleOptions } from '../../lib/nest/leader-election.options.js';
import { isStorableText, isValidIdentity } from '../../lib/shared/identity.js';
import { releaseReservation } from '../../lib/stores/handover-support.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';

const FORM =
  /identity must be a non-empty string of at most 256 characters, well-formed Unicode \(no lone surrogate\) without control characters \(U\+0000–U\+001F, U\+007F–U\+009F\)/;

const refused: [string, string][] = [
  ['NUL', 'pod\u0000a'],
  ['a lone high surrogate', 'pod-\ud83d'],
  ['a lone low surrogate', '\ude80-pod'],
  ['a surrogate pair reversed', 'pod-\ude80\ud83d'],
  ['a bell (C0)', 'pod\u0007'],
  ['a newline (C0)', 'pod\nfake log line'],
  ['DEL', 'pod\u007f'],
  ['NEL (C1)', 'pod\u0085'],
  ['an empty string', ''],
  ['blanks only', '   '],
  ['257 characters', 'a'.repeat(257)],
];
const accepted = ['pod-7f9c', 'web-1.example.internal:3000', 'pod-ü-ñ-日本', 'pod-🚀', 'a'.repeat(256)];

describe('identity: what every store can carry, checked at construction', () => {
  const store = new InMemoryLeaseStore();
  const make = (options: Partial<ElectorOptions>) => () =>
    new Elector({ store, election: 'jobs', ...options } as ElectorOptions);

  it.each(refused)('new Elector refuses an identity with %s, naming identity and the allowed form', (_, identity) => {
    expect(make({ identity })).toThrow(TypeError);
    expect(make({ identity })).toThrow(FORM);
  });

  it.each(refused)('LeaderElectionModule options refuse an identity with %s', (_, identity) => {
    expect(() => resolveModuleOptions({ store, election: 'jobs', identity })).toThrow(FORM);
  });

  it('the message shows the offending value escaped, never the raw control character', () => {
    expect(make({ identity: 'pod\u0000a' })).toThrow('(got "pod\\u0000a")');
    expect(make({ identity: 'pod-\ud83d' })).toThrow('(got "pod-\\ud83d")');
  });

  it.each(accepted)('accepts %j', (identity) => {
    expect(make({ identity })().identity).toBe(identity);
    expect(isValidIdentity(identity)).toBe(true);
  });

  it('advertise follows the same form (at most 1024 characters)', () => {
    for (const advertise of ['http://pod\u0000:3000', 'http://pod-\ud83d', 'http://pod\r\nX-Evil: 1', '']) {
      expect(make({ advertise })).toThrow(
        /advertise must be a non-empty string of at most 1024 characters, well-formed/,
      );
      expect(() => resolveModuleOptions({ store, election: 'jobs', advertise })).toThrow(/advertise must be/);
    }
    expect(make({ advertise: 'http://pod-ü:3000/🚀' })().advertise).toBe('http://pod-ü:3000/🚀');
  });

  it('a release reserving for an identity no store can carry is refused before anything is sent', () => {
    const signal = new AbortController().signal;
    for (const [, handoverTo] of refused) {
      expect(() => releaseReservation({ signal, handoverTo, reserveMs: 1_000 }, store.limits)).toThrow(
        /release option handoverTo must be a non-empty identity of at most 256 characters, well-formed/,
      );
    }
    expect(releaseReservation({ signal, handoverTo: 'pod-🚀', reserveMs: 1_000 }, store.limits)).toEqual({
      to: 'pod-🚀',
      ms: 1_000,
    });
  });

  it('a handover request to (or by) an identity no store can carry is refused before the store is read', async () => {
    const elector = new Elector({ store, election: 'identity-request', identity: 'pod-a' });
    for (const [, to] of refused) {
      await expect(elector.requestHandover({ to })).rejects.toThrow(/to must be a non-empty identity of at most 256/);
    }
    await expect(elector.requestHandover({ requestedBy: 'ops\u0000' })).rejects.toThrow(
      /requestedBy must be a string of at most 300 characters, well-formed/,
    );
  });

  it('isStorableText: paired surrogates pass, anything unpaired or control does not', () => {
    expect(isStorableText('\ud83d\ude80')).toBe(true);
    expect(isStorableText('\ud83d')).toBe(false);
    expect(isStorableText('\ud83d\ud83d\ude80')).toBe(false);
    expect(isStorableText('\u00a0 \u00ff')).toBe(true);
    expect(isStorableText('\u009f')).toBe(false);
  });
});
