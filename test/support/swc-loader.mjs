// @ts-check
// Module customization hooks (node:module register()) behind swc-register.mjs. Only files outside
// node_modules are touched: `.ts` files are transformed, and relative `.js` specifiers resolve to a
// sibling `.ts` when one exists (what Jest's moduleNameMapper does for the test runs).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { transform } from '@swc/core';
import { swcOptions } from '../../scripts/lib/swc-options.mjs';

const SWC_OPTIONS = swcOptions();

/** @param {string} url */
const isOurs = (url) => url.startsWith('file:') && !url.includes('/node_modules/');

/** @type {import('node:module').ResolveHook} */
export async function resolve(specifier, context, nextResolve) {
  const { parentURL } = context;
  if (parentURL && isOurs(parentURL) && /^\.{1,2}\//.test(specifier) && specifier.endsWith('.js')) {
    const candidate = new URL(`${specifier.slice(0, -3)}.ts`, parentURL);
    if (existsSync(fileURLToPath(candidate))) return { url: candidate.href, format: 'module', shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

/** @type {import('node:module').LoadHook} */
export async function load(url, context, nextLoad) {
  if (isOurs(url) && url.endsWith('.ts')) {
    const filename = fileURLToPath(url);
    const { code } = await transform(await readFile(filename, 'utf8'), { ...SWC_OPTIONS, filename });
    return { format: 'module', source: code, shortCircuit: true };
  }
  return nextLoad(url, context);
}
