/**
 * The one check of a stored job record's shape (board entries, runs, catalogue entries): what a
 * reader needs before trusting fields another process wrote, so a damaged record is reported, not
 * half-read.
 */

type FieldType = 'string' | 'number' | 'boolean';
/** Each field's type; `?` after it: the field may be absent. Other fields are allowed (a newer version's). */
export type Shape = Record<string, FieldType | `${FieldType}?`>;

/** True when `value` is a plain object whose fields have the types `shape` names. */
export function hasShape(value: unknown, shape: Shape): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const fields = value as Record<string, unknown>;
  return Object.entries(shape).every(([field, type]) => {
    const optional = type.endsWith('?');
    const present = fields[field];
    return (optional && present === undefined) || typeof present === (optional ? type.slice(0, -1) : type);
  });
}

/** True when `value` is a plain object (a map) each of whose values passes `item`. */
export function isMapOf(value: unknown, item: (entry: unknown) => boolean): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every(item);
}
