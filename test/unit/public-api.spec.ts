// The root entry is what an app uses; what a store author needs is `<package>/store` (#25). This
// counts every name an entry exports, types included and through any `export *`, by reading its
// source: the root must stay at 48 names or fewer (the redesign left it at 40; job control, #28, added
// 4), and none of the store-author names may come back to it.
import { readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';

const ROOT = join(dirname(new URL(import.meta.url).pathname), '../..');
const ROOT_LIMIT = 48;

/** Names only a store author needs: exported by `/store`, never by the root. */
const STORE_AUTHOR_NAMES = [
  'LeaseStore',
  'LeaseStoreLimits',
  'AcquireRequest',
  'AcquireResult',
  'CallOptions',
  'StateCallOptions',
  'RenewOptions',
  'ReleaseOptions',
  'Lease',
  'LeaseInfo',
  'LeaseMeta',
  'LeaseWatch',
  'HandoverRequest',
  'LeaderStateEntry',
  'LeaseStoreError',
  'LeaseStoreErrorKind',
  'TransientLeaseStoreError',
  'FatalLeaseStoreError',
  'supportsHandover',
  'supportsState',
  'supportsRecords',
  'RecordCapableStore',
  'SharedRecord',
  'RecordWriteOptions',
  'MAX_SHARED_RECORD_BYTES',
  'spreadRequestYields',
  'SPREAD_REASON',
  'PRIORITY_REASON',
  'REPLICA_REASONS',
  'isReplicaRequest',
  'MAX_LEASE_META_BYTES',
  'MAX_HANDOVER_REQUEST_BYTES',
];

const DECLARATION =
  /^export\s+(?:declare\s+)?(?:default\s+)?(?:abstract\s+)?(?:async\s+)?(?:class|interface|type|function\*?|const|let|var|enum|namespace)\s+([A-Za-z_$][\w$]*)/;

type Read = (file: string) => string;
const readLib: Read = (file) => readFileSync(join(ROOT, file), 'utf8');

/** Every name `file` (a .ts of lib/) exports, following `export *` into the files it names. */
function exportedNames(file: string, read: Read = readLib, seen = new Set<string>()): Set<string> {
  const names = new Set<string>();
  if (seen.has(file)) return names;
  seen.add(file);
  const source = read(file)
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  // One statement per match: from `export` at the start of a line to the end of its clause.
  for (const match of source.matchAll(/^export\b[^;{]*(?:\{[^}]*\}[^;\n]*)?/gm)) {
    const statement = match[0].replace(/\s+/g, ' ').trim();
    const star = /^export \* (?:as ([\w$]+) )?from ['"]([^'"]+)['"]/.exec(statement);
    if (star) {
      if (star[1] !== undefined) names.add(star[1]);
      else for (const name of exportedNames(target(file, star[2] as string), read, seen)) names.add(name);
      continue;
    }
    const list = /^export (?:type )?\{([^}]*)\}/.exec(statement);
    if (list) {
      for (const item of (list[1] as string).split(',')) {
        const words = item
          .trim()
          .replace(/^type /, '')
          .split(' as ');
        const name = (words[1] ?? words[0])?.trim();
        if (name) names.add(name);
      }
      continue;
    }
    const declared = DECLARATION.exec(statement);
    if (!declared) throw new Error(`${file}: an export this count cannot read: ${statement}`);
    names.add(declared[1] as string);
  }
  return names;
}

function target(from: string, spec: string): string {
  return posix.normalize(posix.join(posix.dirname(from), spec)).replace(/\.js$/, '.ts');
}

describe('public API', () => {
  const root = exportedNames('lib/index.ts');
  const store = exportedNames('lib/store.ts');

  it(`the root entry exports at most ${ROOT_LIMIT} names, types included`, () => {
    console.log(`lib/index.ts exports ${root.size} names: ${[...root].sort().join(', ')}`);
    expect(root.size).toBeLessThanOrEqual(ROOT_LIMIT);
  });

  it("job control's names are the root's (issue 28): what jobs() and jobHistory() answer, their options, the unknown-job error", () => {
    expect(['JobCommandOptions', 'JobInfo', 'JobRun', 'UnknownJobError'].filter((name) => !root.has(name))).toEqual([]);
  });

  it('the store-author contract is `/store`, not the root', () => {
    console.log(`lib/store.ts exports ${store.size} names: ${[...store].sort().join(', ')}`);
    expect(STORE_AUTHOR_NAMES.filter((name) => root.has(name))).toEqual([]);
    expect(STORE_AUTHOR_NAMES.filter((name) => !store.has(name))).toEqual([]);
  });

  it('the count sees every runtime export of each entry', async () => {
    const runtime = { root: await import('../../lib/index.js'), store: await import('../../lib/store.js') };
    expect(Object.keys(runtime.root).filter((name) => !root.has(name))).toEqual([]);
    expect(Object.keys(runtime.store).filter((name) => !store.has(name))).toEqual([]);
  });

  it('counts through `export *`, lists, renames and declarations', () => {
    const files: Record<string, string> = {
      'lib/entry.ts': [
        "export * from './a/b.js';",
        "export * as ns from './a/c.js';",
        "export {\n  One,\n  type Two,\n  three as Three,\n} from './a/c.js';",
        "export type { Four } from './a/c.js';",
        '// export const Commented = 1;',
      ].join('\n'),
      'lib/a/b.ts': [
        'export const Five = 5;',
        'export abstract class Six {}',
        'export interface Seven {}',
        'export type Eight = 8;',
        'export async function nine() {}',
        "export * from './c.js';",
      ].join('\n'),
      'lib/a/c.ts': 'export enum Ten {}\nexport function eleven(): void {}',
    };
    const names = exportedNames('lib/entry.ts', (file) => files[file] as string);
    expect([...names].sort()).toEqual(
      ['Eight', 'Five', 'Four', 'One', 'Seven', 'Six', 'Ten', 'Three', 'Two', 'eleven', 'nine', 'ns'].sort(),
    );
  });
});
