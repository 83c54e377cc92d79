// Layers point down only (STYLE.md): Nest glue (lib root) → election → stores → shared. This walks
// every import of lib/ and fails on an edge that points up, so a two-way tie cannot creep back in.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';

const ROOT = join(dirname(new URL(import.meta.url).pathname), '../..');
const MESSAGES = 'lib/leader-election.messages.ts';

type Layer = 'shared' | 'stores' | 'election' | 'root';

function layerOf(file: string): Layer {
  if (file.startsWith('lib/shared/')) return 'shared';
  if (file.startsWith('lib/stores/')) return 'stores';
  if (file.startsWith('lib/election/')) return 'election';
  return 'root';
}

/** Module specifiers of static imports, re-exports and dynamic imports (type-only ones included). */
function specifiers(source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]/g)) {
    found.push(match[1] as string);
  }
  for (const match of source.matchAll(/(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)) found.push(match[1] as string);
  for (const match of source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(match[1] as string);
  return found;
}

/** `from` imports `spec`: a reason when that edge points up, undefined when it is allowed. */
function upward(from: string, spec: string): string | undefined {
  const layer = layerOf(from);
  if (!spec.startsWith('.')) {
    if (layer !== 'root' && spec.startsWith('@nestjs/')) return `${layer}/ imports Nest (${spec})`;
    return undefined;
  }
  const to = posix.normalize(posix.join(posix.dirname(from), spec)).replace(/\.js$/, '.ts');
  const target = layerOf(to);
  if (layer === 'shared' && target !== 'shared') return `shared/ imports ${to}`;
  if (layer === 'stores') {
    if (target === 'election') return `stores/ imports election/ (${to})`;
    if (target === 'root' && to !== MESSAGES) return `stores/ imports the Nest layer (${to})`;
  }
  if (layer === 'election') {
    if (target === 'stores' && to !== 'lib/stores/lease-store.ts') return `election/ imports ${to}, not the contract`;
    if (target === 'root' && to !== MESSAGES) return `election/ imports the Nest layer (${to})`;
  }
  return undefined;
}

/** Every upward edge of `files` (path relative to the repository → source), as `from -> to: why`. */
function upwardEdges(files: Map<string, string>): string[] {
  const edges: string[] = [];
  for (const [file, source] of files) {
    for (const spec of specifiers(source)) {
      const why = upward(file, spec);
      if (why === undefined) continue;
      const to = spec.startsWith('.')
        ? posix.normalize(posix.join(posix.dirname(file), spec)).replace(/\.js$/, '.ts')
        : spec;
      edges.push(`${file} -> ${to}: ${why}`);
    }
  }
  return edges;
}

function libSources(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) {
        files.set(relative(ROOT, path).split('\\').join('/'), readFileSync(path, 'utf8'));
      }
    }
  };
  walk(join(ROOT, 'lib'));
  return files;
}

describe('layering of lib/', () => {
  it('has no import pointing up a layer (shared ← stores ← election ← Nest glue)', () => {
    const files = libSources();
    expect(files.size).toBeGreaterThan(50);
    expect(upwardEdges(files)).toEqual([]);
  });

  it('finds a planted upward edge of each kind', () => {
    const files = libSources();
    const plant = (file: string, line: string) => {
      const planted = new Map(files);
      planted.set(file, `${line}\n${files.get(file)}`);
      return upwardEdges(planted);
    };
    expect(plant('lib/shared/abort.ts', "import { messages } from '../leader-election.messages.js';")).toEqual([
      `lib/shared/abort.ts -> ${MESSAGES}: shared/ imports ${MESSAGES}`,
    ]);
    expect(plant('lib/stores/memory.store.ts', "import type { Elector } from '../election/elector.js';")).toHaveLength(
      1,
    );
    expect(
      plant('lib/stores/memory.store.ts', "import { LeaderElectionService } from '../leader-election.service.js';"),
    ).toHaveLength(1);
    expect(plant('lib/election/term.ts', "import { supportsState } from '../stores/state-support.js';")).toHaveLength(
      1,
    );
    expect(plant('lib/election/term.ts', "export { x } from '../leader-only.guard.js';")).toHaveLength(1);
    expect(plant('lib/election/term.ts', "import { Injectable } from '@nestjs/common';")).toHaveLength(1);
    expect(plant('lib/election/term.ts', "const m = await import('../stores/redis/redis.store.js');")).toHaveLength(1);
    // Allowed: the contract, the messages, shared/, and anything from the Nest layer downward.
    expect(plant('lib/election/term.ts', "import type { Lease } from '../stores/lease-store.js';")).toEqual([]);
    expect(plant('lib/leader-election.service.ts', "import { Elector } from './election/elector.js';")).toEqual([]);
  });
});
