#!/usr/bin/env node
// @ts-check
// `npm run check:pack`: what `npm publish` would upload, checked before anyone uploads it.
//   1. the file list of `npm pack --dry-run --json` (which runs `prepack`, i.e. the build):
//      only dist/ and docs/*.md plus README/LICENSE/CHANGELOG/package.json; no tests, no TypeScript sources,
//      no source maps (their sources are not shipped, so a map would point nowhere);
//   2. every `exports` and `bin` target is in the tarball (a bin with its shebang), and every .js
//      there has its .d.ts (but the ESM build's shared chunks, see scripts/bundle-esm.mjs);
//   3. no secret in any shipped file (the Azurite development key, a real AccountKey/SAS
//      signature, a password in a URL, a private key);
//   4. publint (errors fail) and @arethetypeswrong/cli --pack (any problem fails): types and
//      JavaScript resolve for node10, node16 from CJS and from ESM, and bundlers;
//   5. the shipped declarations compile in an app that checks its libraries (`skipLibCheck: false`):
//      a consumer importing every entry, installed from the packed file list, under nodenext (a
//      CommonJS and an ESM file), node16 (ESM), bundler and node10 (module commonjs). attw only
//      resolves; this catches a .d.ts naming what `stripInternal` removed, or any other type error.
// Exit code 0 when all pass; every failure is listed.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** @type {string[]} */
const failures = [];

/**
 * @param {string} command
 * @param {string[]} args
 */
function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  return result;
}

const pack = run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts=false']);
if (pack.status !== 0) {
  console.error(pack.stderr);
  process.exit(pack.status ?? 1);
}
// prepack's build output goes to stdout before the JSON; the JSON array is the last thing printed.
/** @type {string[]} */
const files = JSON.parse(pack.stdout.slice(pack.stdout.lastIndexOf('\n[\n') + 1))[0].files.map(
  /** @param {{ path: string }} f */ (f) => f.path,
);
const shipped = new Set(files);

const allowedTopLevel = new Set(['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md']);
for (const file of files) {
  // docs/: the Markdown pages the README links to (relative links), readable in node_modules too.
  const isDoc = file.startsWith('docs/') && file.endsWith('.md');
  if (!file.startsWith('dist/') && !isDoc && !allowedTopLevel.has(file)) {
    failures.push(`unexpected file in the package: ${file}`);
  }
  if (/(^|\/)(test|tests|__tests__|fixtures)\//.test(file) || /\.(spec|test)\.[cm]?[jt]s$/.test(file)) {
    failures.push(`test file in the package: ${file}`);
  }
  if (/\.[cm]?ts$/.test(file) && !/\.d\.[cm]?ts$/.test(file))
    failures.push(`TypeScript source in the package: ${file}`);
  if (file.endsWith('.map')) failures.push(`source map in the package (its sources are not shipped): ${file}`);
  // Chunks of the bundled ESM build hold shared code; their API is declared by the entries' .d.ts.
  if (/\.[cm]?js$/.test(file) && file.startsWith('dist/') && !file.startsWith('dist/esm/chunks/')) {
    const declaration = file.replace(/\.([cm]?)js$/, '.d.$1ts');
    if (!shipped.has(declaration)) failures.push(`${file} has no ${declaration}`);
  }
}

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
for (const target of exportTargets(manifest.exports)) {
  if (!shipped.has(target.replace(/^\.\//, ''))) failures.push(`exports target missing from the package: ${target}`);
}
// A bin must ship, and start with a shebang: npm links it as an executable script.
for (const [name, target] of Object.entries(manifest.bin ?? {})) {
  const path = String(target).replace(/^\.\//, '');
  if (!shipped.has(path)) failures.push(`bin ${name} target missing from the package: ${target}`);
  else if (!readFileSync(join(root, path), 'utf8').startsWith('#!/usr/bin/env node\n')) {
    failures.push(`bin ${name} (${target}) does not start with #!/usr/bin/env node`);
  }
}
for (const [entry, targets] of Object.entries(manifest.typesVersions?.['*'] ?? {})) {
  for (const target of targets) {
    if (!shipped.has(target.replace(/^\.\//, ''))) failures.push(`typesVersions ${entry} target missing: ${target}`);
  }
}

// Patterns of real credentials. Documentation placeholders such as `AccountKey=…` do not match.
/** @type {Array<[string, RegExp]>} */
const secrets = [
  ['the Azurite development account key', /Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/],
  ['an account key', /AccountKey=[A-Za-z0-9+/]{20,}/],
  ['a SAS signature', /[?&;]sig=[A-Za-z0-9%+/]{20,}/],
  // `user:pass@` and the like are README placeholders, anything else in that place is a password.
  ['a password in a URL', /[a-z][a-z0-9+.-]*:\/\/[^\s/:@'"`]*:(?!(?:pass|password|secret|…|\*+)@)[^\s/@'"`]+@/i],
  ['a private key', /-----BEGIN [A-Z ]*PRIVATE KEY-----/],
];
for (const file of files) {
  const text = readFileSync(join(root, file), 'utf8');
  for (const [what, pattern] of secrets) {
    if (pattern.test(text)) failures.push(`${file} contains ${what}`);
  }
}

const publint = run(process.execPath, [join(root, 'node_modules/publint/src/cli.js'), '--level', 'warning']);
process.stdout.write(publint.stdout);
if (publint.status !== 0 || /^Errors:/m.test(publint.stdout)) failures.push('publint reported errors (see above)');

const attw = run(process.execPath, [
  join(root, 'node_modules/@arethetypeswrong/cli/dist/index.js'),
  '--pack',
  '.',
  '--profile',
  'strict',
  '--format',
  'table-flipped',
]);
process.stdout.write(attw.stdout);
if (attw.status !== 0) failures.push(`@arethetypeswrong/cli found problems:\n${attw.stderr}`);

failures.push(...compileConsumer(files, manifest));

if (failures.length > 0) {
  console.error(`check-pack: ${failures.length} problem(s):\n- ${failures.join('\n- ')}`);
  process.exit(1);
}
console.log(`check-pack: ${files.length} files, all checks passed.`);

/**
 * The file paths in an `exports` map (conditions and subpaths, nested), without package.json.
 * @param {unknown} value
 * @returns {string[]}
 */
function exportTargets(value) {
  if (typeof value === 'string') return value.endsWith('package.json') ? [] : [value];
  if (value === null || typeof value !== 'object') return [];
  return Object.values(value).flatMap(exportTargets);
}

/**
 * Step 5: installs the shipped files as node_modules/<name> of a throwaway app under .tmp/ (so the
 * peers' own types resolve from this repository's node_modules) and type-checks, with
 * `skipLibCheck: false`, a file importing every entry, once per module mode.
 * @param {string[]} shippedFiles
 * @param {{ name: string, exports: Record<string, unknown> }} pkg
 * @returns {string[]} the failures
 */
function compileConsumer(shippedFiles, pkg) {
  mkdirSync(join(root, '.tmp'), { recursive: true });
  const app = mkdtempSync(join(root, '.tmp', 'check-pack-consumer-'));
  try {
    for (const file of shippedFiles) cpSync(join(root, file), join(app, 'node_modules', pkg.name, file));
    // Its own package.json: without one, `import '@leaderlease/nestjs'` would resolve to this
    // repository itself (self-reference), not to the installed copy. No "type": CommonJS, as Nest 11 apps.
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'check-pack-consumer', private: true }));
    const specifiers = Object.keys(pkg.exports)
      .filter((key) => key !== './package.json')
      .map((key) => pkg.name + key.slice(1));
    const source = [
      ...specifiers.map((specifier, i) => `import * as entry${i} from '${specifier}';`),
      `export const entries = [${specifiers.map((_, i) => `entry${i}`).join(', ')}];`,
      '',
    ].join('\n');
    // .cts and .mts: under node16/nodenext the same imports resolve the `require` and the `import` types.
    for (const ext of ['ts', 'cts', 'mts']) writeFileSync(join(app, `consumer.${ext}`), source);

    const tsc7 = join(root, 'node_modules/typescript/bin/tsc');
    // TypeScript 7 removed node10 resolution; apps on it (Nest <= 10 tsconfigs) build with TypeScript
    // 5 or 6: TypeScript 6 is a devDependency of its own for this check (`typescript6`, an npm alias).
    const ts6 = createRequire(join(root, 'package.json')).resolve('typescript6/package.json');
    const tsc6 = join(dirname(ts6), 'bin/tsc');
    const modes = [
      { mode: 'nodenext', tsc: tsc7, files: ['consumer.cts', 'consumer.mts'], options: { module: 'nodenext' } },
      // node16 from CommonJS cannot require an ES module, and the Nest 12 installed here is ESM only:
      // there, an app's own `import '@nestjs/common'` fails alike. (CommonJS under node16 rules needs
      // Nest 11; the nest11 apps of scripts/test-apps.mjs build that way, with skipLibCheck: true.)
      { mode: 'node16', tsc: tsc7, files: ['consumer.mts'], options: { module: 'node16' } },
      {
        mode: 'bundler',
        tsc: tsc7,
        files: ['consumer.ts'],
        options: { module: 'esnext', moduleResolution: 'bundler' },
      },
      {
        mode: 'node10',
        tsc: tsc6,
        files: ['consumer.ts'],
        options: { module: 'commonjs', moduleResolution: 'node10', ignoreDeprecations: '6.0' },
      },
    ];
    /** @type {string[]} */
    const problems = [];
    for (const { mode, tsc, files: inputs, options } of modes) {
      const config = `tsconfig.${mode}.json`;
      const compilerOptions = {
        noEmit: true,
        strict: true,
        skipLibCheck: false,
        target: 'es2022',
        types: ['node'],
        ...options,
      };
      writeFileSync(join(app, config), JSON.stringify({ compilerOptions, files: inputs }, null, 2));
      const result = spawnSync(process.execPath, [tsc, '-p', config, '--pretty', 'false'], {
        cwd: app,
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      });
      if (result.error) throw result.error;
      const version = JSON.parse(readFileSync(join(dirname(dirname(tsc)), 'package.json'), 'utf8')).version;
      if (result.status === 0) {
        console.log(`consumer types (skipLibCheck: false, ${mode}, TypeScript ${version}): ok`);
      } else {
        problems.push(
          `the shipped .d.ts do not compile with skipLibCheck: false under ${mode} (TypeScript ${version}):\n${result.stdout}${result.stderr}`,
        );
      }
    }
    return problems;
  } finally {
    rmSync(app, { recursive: true, force: true });
  }
}
