#!/usr/bin/env node
// @ts-check
// `npm run check:docs`: the docs say what the code does. Run after `npm run build` (the code blocks
// compile against dist/, the CLI examples run dist/esm/cli/bin.js).
//
//   node scripts/check-docs.mjs                  README.md, CONTRIBUTING.md, bench/README.md, docs/**/*.md
//                                                (not docs/api, generated), llms.txt and the API reference
//   node scripts/check-docs.mjs docs/tutorial.md  only the pages named (links, code blocks, commands)
//   node scripts/check-docs.mjs --no-api          everything but the API reference (saves ~40 s)
//
// What is checked, per page:
//   - links: a relative link names an existing file (or folder), its #anchor a heading of the target
//     as GitHub slugs it (or an <a id>); the same for llms.txt, which must also list every docs page;
//   - ```ts blocks: each is a whole file of a reader's CommonJS app, compiled (strict, nodenext,
//     decorators) against the built package; the page's blocks are one project, a first line
//     `// file: app.module.ts` names a block's file, a repeated name replaces the earlier file (every
//     version is compiled). See scripts/lib/docs-typescript.mjs.
//   - ```bash / ```sh / ```shell / ```console blocks: `leaderlease … --help` is run, other `leaderlease`
//     lines have their command and flags checked against the CLI's help, `npm run x` / `npm start` /
//     `npm test` need the script in package.json. See scripts/lib/docs-shell.mjs.
// Markers, words after the fence's language:
//   ```ts fragment   not a whole file (a class member, an options object): parsed for syntax only
//   ```bash user     commands of the reader's own app: its `npm run`/`npm start` lines are not checked
// ```js blocks are parsed for syntax only; other languages (json, yaml, text, sql, http) are not read.
// The API reference: docs/api/ must be what `npm run docs` generates now, with no undocumented export
// and no broken {@link} (scripts/lib/api-docs.mjs --check).
// Every problem is printed as file:line; exit code 1 when there is any.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readPage } from './lib/docs-markdown.mjs';
import { createShellChecker, SHELL_LANGS } from './lib/docs-shell.mjs';
import { checkTypeScriptBlocks } from './lib/docs-typescript.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const started = performance.now();
const args = process.argv.slice(2);
const named = args.filter((a) => !a.startsWith('--'));
const whole = named.length === 0;
const withApi = whole && !args.includes('--no-api');

/** Pages of the repository checked by default; docs/api is generated from lib/ and checked as such. */
function defaultPages() {
  /** @param {string} dir @returns {string[]} */
  const walk = (dir) =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) return path === 'docs/api' ? [] : walk(path);
      return entry.name.endsWith('.md') ? [path] : [];
    });
  const docs = existsSync(join(root, 'docs')) ? walk('docs').sort() : [];
  return [...['README.md', 'CONTRIBUTING.md', 'bench/README.md'].filter((p) => existsSync(join(root, p))), ...docs];
}

/** @type {string[]} */
const problems = [];
const pages = whole ? defaultPages() : named.map((p) => relative(root, resolve(p)));
/** @type {Map<string, Set<string>>} */
const anchorCache = new Map();
/** @param {string} file absolute */
const anchorsOf = (file) => {
  let anchors = anchorCache.get(file);
  if (!anchors) {
    anchors = readPage(readFileSync(file, 'utf8')).anchors;
    anchorCache.set(file, anchors);
  }
  return anchors;
};
/** How a file is named in a report: relative to the repository when inside it. */
const show = (/** @type {string} */ file) => (relative(root, file).startsWith('..') ? file : relative(root, file));

/**
 * @param {string} from the page (absolute)
 * @param {{ target: string, line: number }} link
 */
function checkLink(from, link) {
  const at = `${show(from)}:${link.line}`;
  const { target } = link;
  if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return;
  const hash = target.indexOf('#');
  const path = decodeURIComponent(hash === -1 ? target : target.slice(0, hash)).replace(/\?.*$/, '');
  const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
  // A leading / is the repository's root on a code host.
  const file = path === '' ? from : path.startsWith('/') ? join(root, path) : resolve(dirname(from), path);
  if (!existsSync(file)) {
    problems.push(`${at}: broken link ${target}: ${show(file)} does not exist`);
    return;
  }
  if (anchor === undefined || anchor === '' || !file.endsWith('.md') || statSync(file).isDirectory()) return;
  if (!anchorsOf(file).has(anchor))
    problems.push(`${at}: broken link ${target}: no heading #${anchor} in ${show(file)}`);
}

/** @type {import('./lib/docs-typescript.mjs').DocPage[]} */
const tsPages = [];
const checkShellBlock = createShellChecker(root);
let blocks = 0;
for (const page of pages) {
  const file = join(root, page);
  if (!existsSync(file)) {
    problems.push(`${page}: no such page`);
    continue;
  }
  const read = readPage(readFileSync(file, 'utf8'));
  anchorCache.set(file, read.anchors);
  for (const link of read.links) checkLink(file, link);
  for (const block of read.blocks)
    if (SHELL_LANGS.has(block.lang)) problems.push(...checkShellBlock(block, show(file)));
  tsPages.push({ path: show(file), blocks: read.blocks });
  blocks += read.blocks.length;
}
const { problems: tsProblems, states } = checkTypeScriptBlocks(root, tsPages);
problems.push(...tsProblems);

if (whole) checkLlmsTxt(pages);

if (withApi) {
  const api = spawnSync(process.execPath, [join(root, 'scripts/lib/api-docs.mjs'), '--check'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  if (api.status !== 0)
    problems.push(`docs/api: ${api.stderr.trim() || `scripts/lib/api-docs.mjs --check exited ${api.status}`}`);
}

const seconds = ((performance.now() - started) / 1000).toFixed(1);
const summary = `${pages.length} pages, ${blocks} code blocks, ${states} TypeScript project states${withApi ? ', API reference' : ''}, ${seconds} s`;
if (problems.length > 0) {
  // By file, then line: a page's problems together, in reading order.
  const key = (/** @type {string} */ p) => p.match(/^([^:\n]*)(?::(\d+))?/) ?? ['', p, '0'];
  problems.sort((a, b) => {
    const [, fa, la] = key(a);
    const [, fb, lb] = key(b);
    return fa === fb ? Number(la ?? 0) - Number(lb ?? 0) : fa < fb ? -1 : 1;
  });
  console.error(`check-docs: ${problems.length} problem(s):\n${problems.join('\n')}\n(${summary})`);
  process.exit(1);
}
console.log(`check-docs: all passed (${summary}).`);

/**
 * llms.txt (https://llmstxt.org): `# name`, a `> summary`, then sections of `- [Title](url): note`.
 * Every link resolves, and every docs page plus the README, CONTRIBUTING, CHANGELOG and the API
 * reference's index is listed.
 * @param {string[]} checked the pages checked by default
 */
function checkLlmsTxt(checked) {
  const file = join(root, 'llms.txt');
  if (!existsSync(file)) {
    problems.push('llms.txt: missing');
    return;
  }
  const text = readFileSync(file, 'utf8');
  if (!/^# \S/.test(text)) problems.push('llms.txt:1: must start with "# <name>"');
  if (!/^> \S/m.test(text)) problems.push('llms.txt: has no "> summary" line');
  const { links } = readPage(text);
  for (const link of links) checkLink(file, link);
  const listed = new Set(links.map((l) => relative(root, resolve(root, l.target.replace(/#.*/, '')))));
  const wanted = [...checked, 'README.md', 'CONTRIBUTING.md', 'CHANGELOG.md'];
  if (existsSync(join(root, 'docs/api'))) wanted.push('docs/api/README.md');
  for (const page of new Set(wanted)) if (!listed.has(page)) problems.push(`llms.txt: does not list ${page}`);
}
