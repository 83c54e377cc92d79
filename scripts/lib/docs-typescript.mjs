// @ts-check
// The TypeScript half of scripts/check-docs.mjs: every ```ts block of the docs compiled the way a
// reader's app would compile it, against the built package (dist/), in one tsc run.
//
// Each page is a project: its ```ts blocks are files (`// file: app.module.ts` on a block's first line
// names it, otherwise it is block-<line>.ts), so `./app.module` resolves to that page's block. A block
// reusing a name replaces the earlier file; the page's files as they were are compiled first (a
// "state"), so a tutorial can show a file growing and every version must compile. Every state is a
// folder of one throwaway CommonJS project under .tmp/ (nodenext, strict, decorators; see TSCONFIG),
// whose node_modules/@leaderlease/nestjs links to this repository (its `exports` point into dist/) and
// whose other packages resolve from the repository's node_modules, one level up. One `tsc -p` checks
// all folders at once: `moduleDetection: force` keeps each file a module, so folders never clash.
//
// ```ts fragment (and ```js) blocks are only parsed, with TypeScript 6's API (TypeScript 7, the repo's
// compiler, has no JS API): as written, else as a class body, else as an object literal's members,
// else as an expression; a syntax error in all four is reported.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, normalize } from 'node:path';

/** The compiler options of a reader's app (Nest's starter, with strict on). */
export const TSCONFIG = {
  strict: true,
  module: 'nodenext',
  moduleResolution: 'nodenext',
  target: 'ES2022',
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  esModuleInterop: true,
  skipLibCheck: true,
  types: ['node', 'jest'],
  noEmit: true,
  moduleDetection: 'force',
};

/**
 * @typedef {import('./docs-markdown.mjs').CodeBlock} CodeBlock
 * @typedef {{ path: string, blocks: CodeBlock[] }} DocPage `path` as reported (relative to the repo)
 */

/**
 * @param {string} root the repository
 * @param {DocPage[]} pages
 * @returns {{ problems: string[], states: number }} problems as `page:line: message`
 */
export function checkTypeScriptBlocks(root, pages) {
  /** @type {string[]} */
  const problems = [];
  mkdirSync(join(root, '.tmp'), { recursive: true });
  const project = mkdtempSync(join(root, '.tmp', 'check-docs-'));
  /** @type {Map<string, { page: string, firstLine: number }>} "s3/app.module.ts" → where it came from */
  const origin = new Map();
  let states = 0;
  try {
    // No "type": a CommonJS app, as Nest's starter; its own package.json also stops `@leaderlease/nestjs`
    // from resolving to the repository as a self-reference.
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'check-docs-pages', private: true }));
    mkdirSync(join(project, 'node_modules/@leaderlease'), { recursive: true });
    symlinkSync(root, join(project, 'node_modules/@leaderlease/nestjs'), 'dir');
    for (const page of pages) {
      /** @type {Map<string, { text: string, firstLine: number }>} */
      const files = new Map();
      let changed = false;
      const snapshot = () => {
        if (!changed) return;
        const folder = `s${states++}`;
        for (const [name, file] of files) {
          mkdirSync(dirname(join(project, folder, name)), { recursive: true });
          writeFileSync(join(project, folder, name), file.text);
          origin.set(`${folder}/${name}`, { page: page.path, firstLine: file.firstLine });
        }
        changed = false;
      };
      for (const block of page.blocks) {
        const at = `${page.path}:${block.line + 1}`;
        if (block.lang === 'js' || block.lang === 'javascript') {
          problems.push(...parseOnly(block.text, 'js').map((p) => `${page.path}:${block.line + p.line}: ${p.message}`));
          continue;
        }
        if (block.lang !== 'ts' && block.lang !== 'typescript') continue;
        if (block.words.includes('fragment')) {
          problems.push(...parseOnly(block.text, 'ts').map((p) => `${page.path}:${block.line + p.line}: ${p.message}`));
          continue;
        }
        const named = block.text.match(/^\s*\/\/\s*file:\s*(\S+)/);
        const name = named ? normalize(named[1]) : `block-${block.line}.ts`;
        if (!/\.[cm]?tsx?$/.test(name) || name.startsWith('..') || name.startsWith('/')) {
          problems.push(`${at}: "// file: ${named?.[1]}" must name a .ts file inside the page's project`);
          continue;
        }
        // tsc reports no type error anywhere while any file has a syntax error: such a block is
        // reported here and left out, so the other pages are still type-checked.
        const syntax = parseOnly(block.text, 'ts', false);
        if (syntax.length > 0) {
          problems.push(...syntax.map((p) => `${page.path}:${block.line + p.line}: ${p.message}`));
          continue;
        }
        if (files.has(name)) snapshot();
        files.set(name, { text: block.text, firstLine: block.line + 1 });
        changed = true;
      }
      snapshot();
    }
    if (states === 0) return { problems, states };
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: TSCONFIG, include: ['s*/**/*.ts', 's*/**/*.mts', 's*/**/*.cts'] }, null, 2),
    );
    const tsc = join(dirname(createRequire(join(root, 'package.json')).resolve('typescript/package.json')), 'bin/tsc');
    const result = spawnSync(process.execPath, [tsc, '-p', project, '--pretty', 'false'], {
      cwd: project,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    if (result.error) throw result.error;
    const seen = new Set();
    /** @type {string | undefined} */
    let last;
    for (const line of `${result.stdout}${result.stderr}`.split('\n')) {
      const error = line.match(/^(.+?)\((\d+),(\d+)\): (error|warning) (TS\d+): (.*)$/);
      if (!error) {
        // A message's further lines (an elaborated type error) are indented under it.
        if (last && /^\s+\S/.test(line)) problems[problems.length - 1] += `\n    ${line.trim()}`;
        else if (line.trim() !== '') problems.push(`tsc: ${line}`);
        continue;
      }
      const file = origin.get(error[1].replace(/\\/g, '/'));
      const where = file ? `${file.page}:${file.firstLine + Number(error[2]) - 1}` : `${error[1]}:${error[2]}`;
      const problem = `${where}: ${error[5]} ${error[6]}`;
      // An unchanged file is in every later state of its page: one report.
      if (seen.has(problem)) {
        last = undefined;
        continue;
      }
      seen.add(problem);
      problems.push(problem);
      last = problem;
    }
    if (result.status !== 0 && seen.size === 0 && problems.length === 0) {
      problems.push(`tsc exited with ${result.status} and no error message`);
    }
    return { problems, states };
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}

/** @type {typeof import('typescript6') | undefined} */
let ts6;

/**
 * Syntax errors of a block read on its own (see the file's header for the four readings).
 * @param {string} text
 * @param {'ts' | 'js'} kind
 * @param {boolean} [fragment] also try the fragment readings
 * @returns {Array<{ line: number, message: string }>} line: 1-based within the block
 */
export function parseOnly(text, kind, fragment = true) {
  ts6 ??= /** @type {typeof import('typescript6')} */ (createRequire(import.meta.url)('typescript6'));
  const ts = ts6;
  const readings = [
    { before: '', after: '' },
    { before: 'class Fragment {\n', after: '\n}' },
    { before: 'const fragment = {\n', after: '\n};' },
    { before: 'void (\n', after: '\n);' },
  ];
  /** @type {Array<{ line: number, message: string }>} */
  let first = [];
  for (const [i, { before, after }] of readings.entries()) {
    const output = ts.transpileModule(before + text + after, {
      fileName: `fragment.${kind}`,
      reportDiagnostics: true,
      compilerOptions: { experimentalDecorators: true, target: ts.ScriptTarget.ES2022, allowJs: true },
    });
    const errors = (output.diagnostics ?? []).map((d) => ({
      line:
        d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 - (before ? 1 : 0) : 1,
      message: `syntax: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
    }));
    if (errors.length === 0) return [];
    if (i === 0) first = errors;
    if (!fragment) break;
  }
  return first;
}
