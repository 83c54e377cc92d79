// @ts-check
// `--name value` arguments of the standalone bench scripts.

/** The value after `name` on the command line, or `fallback`. @param {string} name @param {string} fallback */
export function arg(name, fallback) {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : fallback;
}
