/**
 * What an identity (and any other text the library writes into a store: `advertise`, a handover
 * request's `to` and `requestedBy`) may contain so that every store can keep it. Checked where the
 * text enters (options, a request, a release), so a value a store cannot carry fails there, naming
 * the option, instead of in every store call: PostgreSQL `text` refuses U+0000 (SQLSTATE 22021),
 * `jsonb` refuses U+0000 and lone surrogates (22P05), and Azure metadata is URI-encoded, which throws
 * on a lone surrogate. Control characters also have no place in a log line or a header.
 */

/** Longest identity, in UTF-16 code units (the SQL stores' `holder` column is 256 characters). */
export const MAX_IDENTITY_LENGTH = 256;

/**
 * True when `value` is well-formed UTF-16 (every surrogate paired; `String.prototype.isWellFormed`
 * is not in every runtime the package supports) and has no C0 control, DEL or C1 control.
 */
export function isStorableText(value: string): boolean {
  for (let i = 0; i < value.length; i += 1) {
    const unit = value.charCodeAt(i);
    if (unit < 0x20 || (unit >= 0x7f && unit <= 0x9f)) return false;
    if (unit >= 0xdc00 && unit <= 0xdfff) return false;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
      i += 1;
    }
  }
  return true;
}

/** An identity every store can carry: a string, not blank, at most 256 code units, storable text. */
export function isValidIdentity(value: unknown): value is string {
  return (
    typeof value === 'string' && value.trim() !== '' && value.length <= MAX_IDENTITY_LENGTH && isStorableText(value)
  );
}
