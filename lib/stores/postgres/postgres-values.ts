import { storeMessages as messages } from '../store.messages.js';

/** What PostgresLeaseStore checks before the server sees it: names it splices into SQL, JSON for jsonb. */

const STORE = 'PostgresLeaseStore';
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
/** JSON's escape of U+0000 (not preceded by an escaping backslash), which jsonb refuses. */
export const NUL_ESCAPE = /(?<!\\)(?:\\\\)*\\u0000/;

export function identifier(option: string, value: string): string {
  if (typeof value !== 'string' || !IDENTIFIER.test(value)) {
    throw new TypeError(messages.backend.invalidIdentifier(STORE, option, value, 63));
  }
  return value;
}

/** JSON bound for a jsonb column: U+0000, which jsonb refuses (22P05), is refused up front. */
export function jsonb(json: string | undefined, what: string): string | undefined {
  if (json !== undefined && NUL_ESCAPE.test(json)) {
    throw new TypeError(messages.handover.notStorable(STORE, what, 'U+0000, which jsonb cannot hold'));
  }
  return json;
}
