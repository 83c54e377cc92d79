// @ts-check
// What the peer-library children (plain JS, so they load none of our code) share: their settings
// from the environment, and the `@@b {json}` stdout lines bench/run.mjs reads (as stores.ts's emit).

/**
 * @param {string} name
 * @param {string} [fallback]
 * @returns {string}
 */
export const env = (name, fallback) => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};

/** @param {string} identity */
export const emitter = (identity) => (/** @type {Record<string, unknown>} */ event) =>
  process.stdout.write(`@@b ${JSON.stringify({ ...event, id: identity, at: Date.now() })}\n`);
