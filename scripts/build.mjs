#!/usr/bin/env node
// @ts-check
// `npm run build`: dist/esm (ES modules) and dist/commonjs (CommonJS), each with its .d.ts, from the
// one source folder lib/, then the ESM JavaScript bundled per entry (scripts/bundle-esm.mjs).
//
// The TypeScript of this repository compiles lib/ twice with tsconfig.build.json, module `nodenext`
// both times: the format of each file follows the `type` of its nearest package.json, so the ESM pass
// reads lib/ where it is (the root package.json says "module") and the CommonJS pass reads a copy of
// lib/ beside a package.json saying "commonjs" (what tshy did with src/package.json, without writing
// into the source tree). Same compiler options, same emit: decorators and their metadata included.
// Both passes write under .tmp/build/; dist/ is replaced only when both succeed, so a failed build
// leaves the previous one in place.
//
// Entry points are package.json's `exports` (their `import` targets) and `bin`; nothing else to edit.
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const staging = join(root, '.tmp/build');
const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin/tsc');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** @param {string} script @param {string[]} args */
function run(script, args) {
  const result = spawnSync(process.execPath, [script, ...args], { cwd: root, stdio: 'inherit' });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    rmSync(staging, { recursive: true, force: true });
    process.exit(result.status ?? 1);
  }
}

rmSync(staging, { recursive: true, force: true });
mkdirSync(staging, { recursive: true });

// ES modules: lib/ as it is.
run(tsc, ['-p', 'tsconfig.build.json', '--outDir', join(staging, 'esm')]);

// CommonJS: a copy of lib/ whose nearest package.json says so.
const cjsSource = join(staging, 'commonjs-src');
cpSync(join(root, 'lib'), join(cjsSource, 'lib'), { recursive: true });
writeFileSync(join(cjsSource, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
writeFileSync(
  join(cjsSource, 'tsconfig.json'),
  `${JSON.stringify({ extends: '../../../tsconfig.build.json', include: ['lib'], compilerOptions: { rootDir: 'lib' } })}\n`,
);
run(tsc, ['-p', join(cjsSource, 'tsconfig.json'), '--outDir', join(staging, 'commonjs')]);

// Each dialect's folder says what it holds, and that importing it has no side effects.
for (const [dialect, type] of [
  ['esm', 'module'],
  ['commonjs', 'commonjs'],
]) {
  const folder = { type, sideEffects: manifest.sideEffects };
  writeFileSync(join(staging, dialect, 'package.json'), `${JSON.stringify(folder, null, 2)}\n`);
}

rmSync(join(root, 'dist'), { recursive: true, force: true });
mkdirSync(join(root, 'dist'));
for (const dialect of ['esm', 'commonjs']) renameSync(join(staging, dialect), join(root, 'dist', dialect));
rmSync(staging, { recursive: true, force: true });

run(join(root, 'scripts/bundle-esm.mjs'), []);

for (const bin of Object.values(/** @type {Record<string, string>} */ (manifest.bin))) {
  chmodSync(join(root, bin), 0o755);
}
