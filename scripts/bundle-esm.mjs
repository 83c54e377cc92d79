#!/usr/bin/env node
// @ts-check
// Last build step (scripts/build.mjs runs it after tsc): the ESM build's JavaScript becomes one file per entry point plus
// shared chunks (esbuild, code splitting). Why: Node's ESM loader pays about half a millisecond per
// module file (async open/stat/read, resolution, link), so the ~50 files the root entry's graph had
// cost +30–45 ms of cold import next to @nestjs/core; bundled, about a third of that. Shared code sits
// in chunks, so the root entry and the subpaths (`/postgres`, `/testing`, …) still share one copy of
// every class (instanceof, DI tokens). The .d.ts files stay per source file as tsc wrote them; the
// CommonJS build is left as it is (require() is synchronous and cheap per file).
//
//   node scripts/bundle-esm.mjs        (npm run build runs it, after both tsc passes)
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const esm = join(root, 'dist/esm');
const staging = join(root, 'dist/.esm-bundle');

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
/** @type {string[]} */
const entries = [
  ...Object.values(/** @type {Record<string, string | { import: { default: string } }>} */ (manifest.exports)).flatMap(
    (target) => (typeof target === 'string' ? [] : [join(root, target.import.default)]),
  ),
  ...Object.values(/** @type {Record<string, string>} */ (manifest.bin)).map((bin) => join(root, bin)),
];

/** @param {string} dir @returns {string[]} */
function jsFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return jsFiles(path);
    return name.endsWith('.js') ? [path] : [];
  });
}

rmSync(staging, { recursive: true, force: true });
await build({
  entryPoints: entries,
  outdir: staging,
  outbase: esm,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Dependencies and peers stay imports: the app's copy of Nest, rxjs and the drivers is used.
  packages: 'external',
  chunkNames: 'chunks/[name]-[hash]',
  // Nest and our log lines read class names; bundling must not rename a class to avoid a clash.
  keepNames: true,
  legalComments: 'none',
  logLevel: 'warning',
});

// Replace the per-file JavaScript with the bundles; declarations and dist/esm/package.json stay.
for (const file of jsFiles(esm)) rmSync(file);
for (const file of jsFiles(staging)) {
  const target = join(esm, relative(staging, file));
  mkdirSync(dirname(target), { recursive: true });
  renameSync(file, target);
}
rmSync(staging, { recursive: true, force: true });
