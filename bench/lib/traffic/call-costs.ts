// What each kind of store call (class and method) costs on the wire, per message label, estimated
// from clusters of overlapping calls: every cluster says "these calls together sent these messages",
// so the per-kind costs are the non-negative least-squares solution of all those sums. Kinds that
// always come together (the job board's read and the handover read, both after every renewal) cannot
// be told apart and share their sum equally (a small ridge term); they are of one class, so their
// scaling to the defaults does not depend on that split.

/** One cluster: how many calls of each kind it held, and the messages of each label sent during it. */
export interface ClusterSum {
  kinds: Record<string, number>;
  messages: Record<string, number>;
}

const RIDGE = 1e-6;

/** Per kind, per label: the estimated messages one call of that kind sends. */
export function callCosts(clusters: readonly ClusterSum[]): Record<string, Record<string, number>> {
  const kinds = [...new Set(clusters.flatMap((c) => Object.keys(c.kinds)))].sort();
  const labels = [...new Set(clusters.flatMap((c) => Object.keys(c.messages)))].sort();
  const costs: Record<string, Record<string, number>> = Object.fromEntries(kinds.map((k) => [k, {}]));
  for (const label of labels) {
    const solution = nonNegativeLeastSquares(
      clusters.map((c) => kinds.map((k) => c.kinds[k] ?? 0)),
      clusters.map((c) => c.messages[label] ?? 0),
    );
    kinds.forEach((kind, i) => {
      const value = solution[i] ?? 0;
      if (value > 0) (costs[kind] as Record<string, number>)[label] = value;
    });
  }
  return costs;
}

/**
 * min ‖A·x − b‖² + ridge·‖x‖² with x ≥ 0, by solving on the columns still free and dropping the one
 * most negative until none is (a few kinds: exact enough, and cheap).
 */
function nonNegativeLeastSquares(rows: number[][], b: number[]): number[] {
  const x = new Array<number>(rows[0]?.length ?? 0).fill(0);
  let free = x.map((_, i) => i);
  for (;;) {
    const solved = solveRidge(rows, b, free);
    const worst = solved.reduce((at, value, i) => (value < (solved[at] ?? 0) ? i : at), -1);
    if (worst < 0) {
      free.forEach((column, i) => {
        x[column] = solved[i] ?? 0;
      });
      return x;
    }
    free = free.filter((_, i) => i !== worst);
  }
}

/** The ridge normal equations (AᵀA + ridge·I)·x = Aᵀb on `columns`, by Gauss–Jordan elimination with partial pivoting. */
function solveRidge(rows: number[][], b: number[], columns: number[]): number[] {
  const m = columns.length;
  const a: number[][] = columns.map((ci, i) => {
    const line = columns.map((cj, j) => rows.reduce((s, row) => s + row[ci] * row[cj], 0) + (i === j ? RIDGE : 0));
    line.push(rows.reduce((s, row, r) => s + row[ci] * b[r], 0));
    return line;
  });
  for (let i = 0; i < m; i++) {
    let pivot = i;
    for (let r = i + 1; r < m; r++) if (Math.abs(a[r][i]) > Math.abs(a[pivot][i])) pivot = r;
    [a[i], a[pivot]] = [a[pivot], a[i]];
    const head = a[i][i];
    if (head === 0) continue;
    for (let r = 0; r < m; r++) {
      if (r === i) continue;
      const factor = a[r][i] / head;
      for (let j = i; j <= m; j++) a[r][j] -= factor * a[i][j];
    }
  }
  return a.map((row, i) => (row[i] ? row[m] / row[i] : 0));
}
