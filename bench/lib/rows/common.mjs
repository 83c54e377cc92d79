// @ts-check
// The shape of a report row, shared by every figure's rows.

/**
 * @typedef {object} Row
 * @property {number} figure
 * @property {string} metric
 * @property {string} subject
 * @property {string} settings
 * @property {string} unit
 * @property {number | null | undefined} n
 * @property {number | null} median
 * @property {number | null} p95
 * @property {number | null} max
 * @property {number | null} bound
 * @property {string} boundText
 * @property {number | null} [added]
 * @property {string} [note]
 * @property {number} [digits]
 * @property {string[]} [failures]
 * @property {Record<string, number>} [detail]
 */

/** @typedef {{ n: number, median: number | null, p95: number | null, max: number | null }} Stats */

/** @param {number} ms */
export const seconds = (ms) => `${ms / 1000} s`;

/** @param {{ leaseMs: number, renewDeadlineMs: number, renewMs: number, retryMs: number }} t */
export const settingsText = (t) =>
  `lease ${seconds(t.leaseMs)}, deadline ${seconds(t.renewDeadlineMs)}, renew ${seconds(t.renewMs)}, retry ${seconds(t.retryMs)}`;

/**
 * @param {number} figure
 * @param {string} metric
 * @param {string} subject
 * @param {string} settings
 * @param {string} unit
 * @param {Stats} stats
 * @param {number | null} bound
 * @param {string} boundText
 * @returns {Row}
 */
export function rowFrom(figure, metric, subject, settings, unit, stats, bound, boundText) {
  return {
    figure,
    metric,
    subject,
    settings,
    unit,
    n: stats.n,
    median: stats.median,
    p95: stats.p95,
    max: stats.max,
    bound,
    boundText,
  };
}

/**
 * A row of one measured value (n = 1, no p95 or max).
 * @param {number} figure
 * @param {string} metric
 * @param {string} subject
 * @param {string} settings
 * @param {string} unit
 * @param {number | null} value
 * @param {number | null} bound
 * @param {string} boundText
 * @returns {Row}
 */
export function single(figure, metric, subject, settings, unit, value, bound, boundText) {
  return rowFrom(
    figure,
    metric,
    subject,
    settings,
    unit,
    { n: 1, median: value, p95: null, max: null },
    bound,
    boundText,
  );
}

/**
 * @param {Row} row
 * @param {string[]} failures
 * @returns {Row}
 */
export function failRow(row, failures) {
  return failures.length ? { ...row, failures } : row;
}
