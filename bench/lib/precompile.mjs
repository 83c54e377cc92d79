// @ts-check
// The bench's TypeScript apps and what they import (lib/, test/support/), compiled once per run with
// the tests' swc options into .tmp/bench-build/ (same relative layout, `.ts` → `.js`), so each of the
// few hundred processes a run boots loads plain JavaScript. Through the loader every module load
// crosses to the hooks' thread: a Nest replica took ≈ 1.4 s of CPU to boot that way, which on 2 cores
// made the process boots, not the leases, set the quick run's length. Same compiler, same options as
// the loader, so the code measured is the same.
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { transform } from '@swc/core';
import { swcOptions } from '../../scripts/lib/swc-options.mjs';

/** Relative `.js` specifiers of compiled ESM (static and dynamic imports, re-exports). */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+\.js)["']/g;

/**
 * Compiles `entries` (repo-relative `.ts` paths) and every `.ts` file they reach through relative
 * imports into `outDir`, which is emptied first.
 * @param {string} root the repository
 * @param {string[]} entries
 * @param {string} outDir
 * @returns {Promise<{ files: number, ms: number }>}
 */
export async function precompile(root, entries, outDir) {
  const startedAt = performance.now();
  const options = { ...swcOptions(), sourceMaps: false };
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  // Plain `.js` files under outDir are ES modules, as the loader serves them.
  await writeFile(join(outDir, 'package.json'), '{ "type": "module" }\n');
  const queue = entries.map((entry) => join(root, entry));
  const seen = new Set(queue);
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    const { code } = await transform(await readFile(file, 'utf8'), { ...options, filename: file });
    const target = join(outDir, relative(root, file)).replace(/\.ts$/, '.js');
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, code);
    for (const [, specifier] of code.matchAll(SPECIFIER)) {
      const source = join(dirname(file), `${specifier.slice(0, -3)}.ts`);
      if (!seen.has(source) && existsSync(source)) {
        seen.add(source);
        queue.push(source);
      }
    }
  }
  return { files: seen.size, ms: performance.now() - startedAt };
}
