// @ts-check
// Summaries of trial samples: count, median, p95, max (nearest-rank percentiles).

/** @param {number[]} values */
export function summarize(values) {
  const sorted = values.filter((v) => typeof v === 'number' && Number.isFinite(v)).sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return { n: 0, median: null, p95: null, max: null, min: null };
  /** @param {number} p */
  const rank = (p) => sorted[Math.min(n - 1, Math.max(0, Math.ceil(p * n) - 1))];
  const median = n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  return { n, median, p95: rank(0.95), max: sorted[n - 1], min: sorted[0] };
}

/**
 * @param {number | null | undefined} value
 * @param {number} [digits]
 */
export const round = (value, digits = 0) =>
  value === null || value === undefined ? null : Number(value.toFixed(digits));
