// A chaos spec file's table of measured values, and the run's summary of every file's tables.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScenarioSummary } from './checks.js';
import type { Scenario } from './scenario.js';

export interface ResultRow {
  scenario: string;
  /** What was measured, e.g. "kill -9 → new leader". */
  measure: string;
  /** e.g. "15069 ms", "0 changes". */
  value: string;
  bound: string;
  overlaps: number;
  terms: number;
  storeCalls: number;
  steps: number;
  wallS: number;
}

/** `1234 ms` for a number of milliseconds. */
export const ms = (value: number) => `${Math.round(value)} ms`;

const RESULTS_DIR = join(tmpdir(), 'leaderlease-chaos');

/** Collects a spec file's rows; `flush()` prints its table and rewrites the run's summary. */
export class Results {
  readonly rows: ResultRow[] = [];

  constructor(private readonly file: string) {}

  add(row: ResultRow): void {
    this.rows.push(row);
  }

  /** A row from a finished scenario. */
  from(scenario: Scenario, summary: ScenarioSummary, measure: string, value: string, bound: string): void {
    this.add({
      scenario: scenario.name,
      measure,
      value,
      bound,
      overlaps: summary.report.violations.filter((v) => v.startsWith('overlap')).length,
      terms: summary.terms,
      storeCalls: summary.storeCalls,
      steps: summary.steps,
      wallS: Math.round((Date.now() - scenario.startedAt) / 1000),
    });
  }

  flush(): void {
    if (this.rows.length === 0) return;
    mkdirSync(RESULTS_DIR, { recursive: true });
    const rows = [...this.rows].sort((a, b) => a.scenario.localeCompare(b.scenario));
    writeFileSync(
      join(RESULTS_DIR, `${this.file}.json`),
      JSON.stringify({ at: new Date().toISOString(), rows }, null, 2),
    );
    const all = readdirSync(RESULTS_DIR)
      .filter((f) => f.endsWith('.json'))
      .flatMap((f) => (JSON.parse(readFileSync(join(RESULTS_DIR, f), 'utf8')) as { rows: ResultRow[] }).rows)
      .sort((a, b) => a.scenario.localeCompare(b.scenario, undefined, { numeric: true }));
    writeFileSync(join(RESULTS_DIR, 'latest.md'), `${table(all)}\n`);
    console.log(
      `${table(rows)}\n\nchaos results: ${join(RESULTS_DIR, `${this.file}.json`)} (all files: ${join(RESULTS_DIR, 'latest.md')})`,
    );
  }
}

export function table(rows: ResultRow[]): string {
  const lines = [
    '| scenario | measured | value | bound | overlaps | terms | store calls | leader-only steps | wall |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.scenario} | ${r.measure} | ${r.value} | ${r.bound} | ${r.overlaps} | ${r.terms} | ${r.storeCalls} | ${r.steps} | ${r.wallS} s |`,
    ),
  ];
  return lines.join('\n');
}
