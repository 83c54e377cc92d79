import { execFile } from 'node:child_process';
import { mkdir, readdir, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = join(ROOT, 'node_modules/.bin');
/** Held while one Jest worker builds: the build replaces dist/, so two builds at once break both. */
const LOCK = join(ROOT, 'node_modules/.cache/build-sample-app.lock');
/** Written after a build that succeeded; newer than every input means there is nothing to build. */
const STAMP = join(ROOT, 'sample-app/dist/.built');
const INPUTS = [
  'lib',
  'scripts/build.mjs',
  'scripts/bundle-esm.mjs',
  'sample-app/src',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'sample-app/tsconfig.json',
];
/** A lock older than any build is left over from a killed run. */
const STALE_LOCK_MS = 300_000;

/**
 * The first half of `npm start`: the package's own build (CommonJS and ESM in dist/, see
 * scripts/build.mjs), then the sample app against it (sample-app/dist/). Suites running in
 * parallel workers (the demo, the status page) share one build: the first builds, the others wait
 * for it and find it up to date, so none rebuilds dist/ under a running sample app.
 */
export async function buildSampleApp(): Promise<void> {
  await withLock(async () => {
    if (await upToDate()) return;
    // The package's own build script (tsc per dialect, then the ESM bundling step), so tests run what ships.
    for (const [command, args] of [
      ['npm', ['run', '--silent', 'build']],
      [join(BIN, 'tsc'), ['-p', 'sample-app/tsconfig.json']],
    ] as const) {
      try {
        await promisify(execFile)(command, args, { cwd: ROOT });
      } catch (error) {
        // tsc reports type errors on stdout.
        const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
        throw new Error(`${[command, ...args].join(' ')} failed:\n${stdout}${stderr}`);
      }
    }
    await writeFile(STAMP, '');
  });
}

async function upToDate(): Promise<boolean> {
  const built = await mtime(STAMP);
  if (built === undefined || (await mtime(join(ROOT, 'dist/esm/index.js'))) === undefined) return false;
  for (const input of INPUTS) {
    const path = join(ROOT, input);
    const info = await stat(path);
    const files = info.isDirectory()
      ? (await readdir(path, { recursive: true })).map((file) => join(path, file))
      : [path];
    for (const file of files) if (((await mtime(file)) ?? Number.POSITIVE_INFINITY) > built) return false;
  }
  return true;
}

async function mtime(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mtimeMs;
  } catch {
    return undefined;
  }
}

async function withLock(work: () => Promise<void>): Promise<void> {
  await mkdir(dirname(LOCK), { recursive: true });
  for (;;) {
    try {
      await mkdir(LOCK);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const since = await mtime(LOCK);
      if (since !== undefined && Date.now() - since > STALE_LOCK_MS) await rmdir(LOCK).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    await work();
  } finally {
    await rmdir(LOCK);
  }
}
