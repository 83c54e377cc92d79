// Layers point down only and no two files of lib/ tie each other (STYLE.md, DESIGN.md §2):
//   entry files (lib/*.ts) → nest/ → leadership/ → metrics/ → election/ → stores/ → shared/
// with testing/ on top of nest/, and cli/ beside them, using only election/, stores/, shared/ and the
// entry files (it loads a store the way an app would); conformance/ (the exported store suite) on top
// of stores/ only, reached through the store entry. This walks every import of lib/ (type-only
// and dynamic ones included) and fails on an edge that points up, on an import cycle, and on a file
// at the top of lib/ that is not an entry. It also keeps every file small (STYLE.md: split by role
// when one grows): at most 300 lines, 450 for the elector, which opens with the timing-rules header.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';

const ROOT = join(dirname(new URL(import.meta.url).pathname), '../..');

/** The entry file of every export path: `./dist/esm/x.js` in package.json's `exports` is built from `lib/x.ts`. */
const ENTRIES = Object.values(
  (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }).exports,
).flatMap((target) => {
  const built = (target as { import?: { default?: string } }).import?.default;
  return built === undefined ? [] : [posix.join('lib', posix.relative('./dist/esm', built).replace(/\.js$/, '.ts'))];
});

const LAYERS = [
  'shared',
  'stores',
  'conformance',
  'election',
  'metrics',
  'leadership',
  'nest',
  'testing',
  'cli',
  'entry',
] as const;
type Layer = (typeof LAYERS)[number];

/** What each layer may import from lib/ (its own folder included). */
const ALLOWED: Record<Layer, readonly Layer[]> = {
  shared: ['shared'],
  stores: ['stores', 'shared'],
  // The exported conformance suite judges a store by the contract alone: no elector, no Nest.
  conformance: ['conformance', 'stores', 'shared'],
  // election/ reaches stores/ through the contract only (ELECTION_STORE_CONTRACT).
  election: ['election', 'stores', 'shared'],
  metrics: ['metrics', 'election', 'stores', 'shared'],
  leadership: ['leadership', 'metrics', 'election', 'stores', 'shared'],
  nest: ['nest', 'leadership', 'metrics', 'election', 'stores', 'shared'],
  testing: ['testing', 'nest', 'leadership', 'metrics', 'election', 'stores', 'shared'],
  cli: ['cli', 'entry', 'election', 'stores', 'shared'],
  entry: ['nest', 'leadership', 'metrics', 'election', 'stores', 'shared', 'testing', 'conformance'],
};

/** Layers that may import @nestjs/*; leadership/ only for types (a logger), never a Nest value. */
const NEST_IMPORTS: readonly Layer[] = ['nest', 'testing', 'entry'];
const NEST_TYPE_IMPORTS: readonly Layer[] = ['leadership'];

/** The store contract, split by role: the interface, its calls' types, the capability guards, the spread rule. */
const ELECTION_STORE_CONTRACT: readonly string[] = [
  'lib/stores/lease-store.ts',
  'lib/stores/lease-store.calls.ts',
  'lib/stores/lease-store.capabilities.ts',
  'lib/stores/lease-store.spread-rule.ts',
];

/** Upward edges known today, each `from -> to` (none since phase 2 of #25, the handle split). */
const KNOWN_UPWARD_EDGES: readonly string[] = [];

/**
 * Import cycles known today, each as the sorted files of one strongly connected component: none (the
 * loop ⇄ handover desk cycle went with phase 5 of #25: the desk hears of terms through the term keeper).
 */
const KNOWN_CYCLES: readonly (readonly string[])[] = [];

function layerOf(file: string): Layer | undefined {
  const [top, folder, rest] = file.split('/');
  if (top !== 'lib' || folder === undefined) return undefined;
  if (rest === undefined) return ENTRIES.includes(file) ? 'entry' : undefined;
  return LAYERS.find((layer) => layer === folder && layer !== 'entry');
}

interface Import {
  spec: string;
  typeOnly: boolean;
}

/** Module specifiers of static imports, re-exports and dynamic imports (type-only ones included). */
function imports(source: string): Import[] {
  const found: Import[] = [];
  for (const match of source.matchAll(/(?:^|\n)\s*(import|export)(\s+type\b)?[^'"]*?\bfrom\s*['"]([^'"]+)['"]/g)) {
    found.push({ spec: match[3] as string, typeOnly: match[2] !== undefined });
  }
  for (const match of source.matchAll(/(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)) {
    found.push({ spec: match[1] as string, typeOnly: false });
  }
  for (const match of source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    found.push({ spec: match[1] as string, typeOnly: false });
  }
  return found;
}

/** The lib/ file a relative specifier of `from` names (`./x.js` → `…/x.ts`). */
function resolve(from: string, spec: string): string {
  return posix.normalize(posix.join(posix.dirname(from), spec)).replace(/\.js$/, '.ts');
}

/** The files of lib/ each file imports (relative imports only). */
function importGraph(files: Map<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [file, source] of files) {
    const targets = imports(source)
      .filter(({ spec }) => spec.startsWith('.'))
      .map(({ spec }) => resolve(file, spec));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** `from` imports `spec`: a reason when that edge is not allowed, undefined when it is. */
function upward(from: string, { spec, typeOnly }: Import): string | undefined {
  const layer = layerOf(from);
  if (layer === undefined) return `${from} is in no layer`;
  if (!spec.startsWith('.')) {
    if (!spec.startsWith('@nestjs/') || NEST_IMPORTS.includes(layer)) return undefined;
    if (typeOnly && NEST_TYPE_IMPORTS.includes(layer)) return undefined;
    return `${layer}/ imports Nest (${spec})`;
  }
  const to = resolve(from, spec);
  const target = layerOf(to);
  if (target === undefined) return `imports ${to}, in no layer`;
  if (!ALLOWED[layer].includes(target))
    return `${layer}/ imports ${target === 'entry' ? 'an entry file' : `${target}/`}`;
  if (layer === 'election' && target === 'stores' && !ELECTION_STORE_CONTRACT.includes(to)) {
    return `election/ imports ${to}, not the contract`;
  }
  return undefined;
}

/** Every disallowed edge of `files` (path relative to the repository → source), as `from -> to: why`. */
function upwardEdges(files: Map<string, string>): string[] {
  const edges: string[] = [];
  for (const [file, source] of files) {
    for (const found of imports(source)) {
      const why = upward(file, found);
      if (why === undefined) continue;
      const to = found.spec.startsWith('.') ? resolve(file, found.spec) : found.spec;
      if (KNOWN_UPWARD_EDGES.includes(`${file} -> ${to}`)) continue;
      edges.push(`${file} -> ${to}: ${why}`);
    }
  }
  return edges;
}

/**
 * The import cycles of `files`: every strongly connected component of the import graph with more than
 * one file (or a file importing itself), as its sorted files (Tarjan's algorithm).
 */
function importCycles(files: Map<string, string>): string[][] {
  const graph = importGraph(files);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file) as number, low.get(target) as number));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) as number, index.get(target) as number));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)?.includes(file)) cycles.push(component.sort());
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) visit(file);
  return cycles.sort((a, b) => (a[0] as string).localeCompare(b[0] as string));
}

/** Lines a file of lib/ may have (as `wc -l` counts them). */
const MAX_LINES = 300;
/** The file that opens with the timing-rules header (every rule with the code that enforces it) may have more. */
const TIMING_RULES_FILE = 'lib/election/elector.ts';
const TIMING_RULES_MAX_LINES = 450;

/** Every file of `files` over its limit, as `file: n lines (limit)`. */
function oversized(files: Map<string, string>): string[] {
  return [...files].flatMap(([file, source]) => {
    const lines = source.split('\n').length - (source.endsWith('\n') ? 1 : 0);
    const limit = file === TIMING_RULES_FILE ? TIMING_RULES_MAX_LINES : MAX_LINES;
    return lines > limit ? [`${file}: ${lines} lines (limit ${limit})`] : [];
  });
}

function libSources(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.set(relative(ROOT, path).split('\\').join('/'), readFileSync(path, 'utf8'));
    }
  };
  walk(join(ROOT, 'lib'));
  return files;
}

/** `files` with `line` added at the top of `file`. */
function plant(files: Map<string, string>, file: string, line: string): Map<string, string> {
  const planted = new Map(files);
  planted.set(file, `${line}\n${files.get(file) ?? ''}`);
  return planted;
}

describe('layering of lib/', () => {
  it('holds only TypeScript sources, and at its top only the entry files', () => {
    const files = [...libSources().keys()];
    expect(files.length).toBeGreaterThan(50);
    expect(files.filter((file) => !file.endsWith('.ts'))).toEqual([]);
    expect(files.filter((file) => layerOf(file) === undefined)).toEqual([]);
    expect(files.filter((file) => layerOf(file) === 'entry').sort()).toEqual([...ENTRIES].sort());
  });

  it('resolves every relative import to a file of lib/', () => {
    const files = libSources();
    const missing = [...importGraph(files)].flatMap(([file, targets]) =>
      targets.filter((target) => !files.has(target)).map((target) => `${file} -> ${target}`),
    );
    expect(missing).toEqual([]);
  });

  it('has no import pointing up a layer (shared ← stores ← election ← metrics ← leadership ← nest)', () => {
    expect(upwardEdges(libSources())).toEqual([]);
  });

  it('still has each known upward edge (remove it from the list once it is gone)', () => {
    const graph = importGraph(libSources());
    const present = KNOWN_UPWARD_EDGES.filter((edge) => {
      const [from, to] = edge.split(' -> ') as [string, string];
      return graph.get(from)?.includes(to);
    });
    expect(present).toEqual(KNOWN_UPWARD_EDGES);
  });

  it('has no import cycle but the known ones (type-only imports included)', () => {
    expect(importCycles(libSources())).toEqual(KNOWN_CYCLES);
  });

  it('finds a planted upward edge of each kind', () => {
    const files = libSources();
    const edges = (file: string, line: string) => upwardEdges(plant(files, file, line));
    // Messages live in their layer's folder (#25): no exemption for them.
    expect(edges('lib/shared/abort.ts', "import { storeMessages } from '../stores/store.messages.js';")).toEqual([
      'lib/shared/abort.ts -> lib/stores/store.messages.ts: shared/ imports stores/',
    ]);
    const memory = 'lib/stores/memory/memory.store.ts';
    expect(edges(memory, "import { electionMessages } from '../../election/election.messages.js';")).toEqual([
      `${memory} -> lib/election/election.messages.ts: stores/ imports election/`,
    ]);
    expect(edges(memory, "import type { Elector } from '../../election/elector.js';")).toHaveLength(1);
    expect(edges(memory, "import { LeaderElectionService } from '../../nest/leader-election.service.js';")).toEqual([
      `${memory} -> lib/nest/leader-election.service.ts: stores/ imports nest/`,
    ]);
    expect(edges('lib/election/term.ts', "import { supportsState } from '../stores/state-support.js';")).toHaveLength(
      1,
    );
    expect(edges('lib/election/term.ts', "export { x } from '../nest/leader-only.guard.js';")).toHaveLength(1);
    expect(edges('lib/election/term.ts', "import type { X } from '../leadership/tick.ledger.js';")).toHaveLength(1);
    expect(edges('lib/election/term.ts', "import { Injectable } from '@nestjs/common';")).toHaveLength(1);
    expect(edges('lib/election/term.ts', "const m = await import('../stores/redis/redis.store.js');")).toHaveLength(1);
    expect(edges('lib/metrics/otel-api.ts', "import type { X } from '../leadership/in-flight.tracker.js';")).toEqual([
      'lib/metrics/otel-api.ts -> lib/leadership/in-flight.tracker.ts: metrics/ imports leadership/',
    ]);
    expect(edges('lib/leadership/tick.ledger.ts', "import { X } from '../nest/leader-only.guard.js';")).toHaveLength(1);
    expect(edges('lib/leadership/tick.ledger.ts', "import { Injectable } from '@nestjs/common';")).toHaveLength(1);
    expect(edges('lib/nest/leader-only.guard.ts', "import { X } from '../testing/testing.elector.js';")).toHaveLength(
      1,
    );
    expect(edges('lib/nest/leader-only.guard.ts', "import { X } from '../index.js';")).toHaveLength(1);
    expect(edges('lib/cli/table.ts', "import { X } from '../nest/leader-election.service.js';")).toHaveLength(1);
    expect(edges('lib/index.ts', "export { X } from './cli/main.js';")).toHaveLength(1);
    // Allowed: the contract, shared/, Nest types in leadership/, anything from above downward (messages too).
    expect(edges('lib/election/term.ts', "import type { Lease } from '../stores/lease-store.js';")).toEqual([]);
    expect(edges('lib/leadership/tick.ledger.ts', "import type { Logger } from '@nestjs/common';")).toEqual([]);
    expect(edges('lib/nest/leader-election.service.ts', "import { Elector } from '../election/elector.js';")).toEqual(
      [],
    );
    expect(
      edges(
        'lib/nest/leader-election.service.ts',
        "import { leadershipMessages } from '../leadership/leadership.messages.js';",
      ),
    ).toEqual([]);
    expect(edges('lib/testing/testing.elector.ts', "import { X } from '../nest/leader-election.service.js';")).toEqual(
      [],
    );
    expect(edges('lib/cli/table.ts', "const { X } = await import('../postgres.js');")).toEqual([]);
  });

  it('finds a planted cycle, type-only and dynamic imports included', () => {
    const files = libSources();
    const known = (planted: Map<string, string>) =>
      importCycles(planted).filter((cycle) => !KNOWN_CYCLES.some((k) => k.join() === cycle.join()));
    expect(known(plant(files, 'lib/shared/clock.ts', "import type { X } from './clock.js';"))).toEqual([
      ['lib/shared/clock.ts'],
    ]);
    // lib/leadership/settled.ts imports in-flight.tracker.ts; planting the way back closes a loop.
    expect(
      known(plant(files, 'lib/leadership/in-flight.tracker.ts', "import type { onSettled } from './settled.js';")),
    ).toEqual([['lib/leadership/in-flight.tracker.ts', 'lib/leadership/settled.ts']]);
    const dynamic = known(
      plant(files, 'lib/shared/abort.ts', "const c = await import('../stores/memory/memory.store.js');"),
    );
    expect(dynamic).toHaveLength(1);
    expect(dynamic[0]).toEqual(expect.arrayContaining(['lib/shared/abort.ts', 'lib/stores/memory/memory.store.ts']));
    // The desk reaching back into the loop (as it did before #25 phase 5) is a cycle again.
    expect(
      known(plant(files, 'lib/election/handover.ts', "import type { ElectionLoop } from './election-loop.js';")),
    ).toEqual([['lib/election/election-loop.ts', 'lib/election/handover.ts']]);
  });
});

describe('size of the files of lib/', () => {
  it(`keeps every file at ${MAX_LINES} lines or fewer (${TIMING_RULES_MAX_LINES} for the timing-rules file)`, () => {
    const files = libSources();
    expect(files.get(TIMING_RULES_FILE)).toMatch(/^\/\/ Timing rules of leader election\./);
    expect(oversized(files)).toEqual([]);
  });

  it('finds a planted file over its limit', () => {
    const files = libSources();
    const grown = (file: string, lines: number) => {
      const planted = new Map(files);
      planted.set(file, `${'// filler\n'.repeat(lines)}`);
      return oversized(planted);
    };
    expect(grown('lib/shared/clock.ts', MAX_LINES)).toEqual([]);
    expect(grown('lib/shared/clock.ts', MAX_LINES + 1)).toEqual([
      `lib/shared/clock.ts: ${MAX_LINES + 1} lines (limit 300)`,
    ]);
    expect(grown(TIMING_RULES_FILE, TIMING_RULES_MAX_LINES)).toEqual([]);
    expect(grown(TIMING_RULES_FILE, TIMING_RULES_MAX_LINES + 1)).toHaveLength(1);
  });
});
