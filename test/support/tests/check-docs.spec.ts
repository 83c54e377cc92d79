import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSampleApp } from '../build-sample-app.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const FENCE = '```';

// scripts/check-docs.mjs guards every page of the docs; a checker that passes everything would go
// unnoticed, so it is fed pages with one known mistake of each kind and must name each by line.
describe('scripts/check-docs.mjs', () => {
  let dir: string;

  beforeAll(async () => {
    // The checker compiles against dist/ and runs the built CLI.
    await buildSampleApp();
    dir = mkdtempSync(join(tmpdir(), 'check-docs-spec-'));
  }, 300_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function check(page: string): { status: number | null; output: string } {
    const file = join(dir, 'page.md');
    writeFileSync(join(dir, 'other.md'), '# Other page\n\n## A `code` heading, with punctuation!\n');
    writeFileSync(file, page);
    const result = spawnSync(process.execPath, [join(ROOT, 'scripts/check-docs.mjs'), file], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    return { status: result.status, output: `${result.stdout}${result.stderr}` };
  }

  it('reports a broken link, a bad anchor, a wrong import, a bad CLI flag and a missing npm script', () => {
    const { status, output } = check(
      [
        '# Page', // 1
        '',
        'See [a page](no-such-page.md), [an anchor](other.md#no-such-heading).', // 3
        '',
        `${FENCE}ts`, // 5
        "import { NoSuchExport } from '@leaderlease/nestjs';", // 6
        'export const x = NoSuchExport;',
        FENCE,
        '',
        `${FENCE}bash`, // 10
        'npx leaderlease status --store redis --no-such-flag', // 11
        'npm run no-such-script', // 12
        FENCE,
        '',
        `${FENCE}ts`, // 15
        '// file: app.ts',
        "const n: number = 'first version, wrong';", // 17
        FENCE,
        `${FENCE}ts`, // 19
        '// file: app.ts',
        'export const n: number = 2;',
        FENCE,
      ].join('\n'),
    );
    expect(status).toBe(1);
    expect(output).toMatch(/page\.md:3: broken link no-such-page\.md/);
    expect(output).toMatch(/page\.md:3: broken link other\.md#no-such-heading: no heading/);
    expect(output).toMatch(/page\.md:6: TS2305 .*NoSuchExport/);
    expect(output).toMatch(/page\.md:11: leaderlease status has no option --no-such-flag/);
    expect(output).toMatch(/page\.md:12: npm script "no-such-script" is not in package\.json/);
    // A replaced file's first version is compiled too.
    expect(output).toMatch(/page\.md:17: TS2322/);
    expect(output).toMatch(/6 problem\(s\)/);
  }, 120_000);

  it('passes a correct page: real imports, anchors, commands, a fragment and a reader-app block', () => {
    const { status, output } = check(
      [
        '# Page',
        '',
        'See [the other page](other.md#a-code-heading-with-punctuation) and [below](#the-app).',
        '',
        '## The app',
        '',
        `${FENCE}ts`,
        '// file: jobs.ts',
        "import { Injectable } from '@nestjs/common';",
        "import { LeaderOnly } from '@leaderlease/nestjs';",
        '@Injectable()',
        'export class Jobs {',
        '  @LeaderOnly()',
        '  tick(): void {}',
        '}',
        FENCE,
        `${FENCE}ts`,
        "import { Jobs } from './jobs';",
        'export const jobs = new Jobs();',
        FENCE,
        `${FENCE}ts fragment`,
        "@LeaderOnly({ election: 'billing' })",
        'async closeBooks() {}',
        FENCE,
        `${FENCE}bash`,
        'npx leaderlease status --help',
        'leaderlease handover --store etcd --election billing --reason "drain --node-3" --wait --json',
        'npm run build && npm test',
        FENCE,
        `${FENCE}bash user`,
        'npm run start:prod',
        FENCE,
      ].join('\n'),
    );
    expect(output).toMatch(/check-docs: all passed/);
    expect(status).toBe(0);
  }, 120_000);
});
