// @ts-check
// What the demo prints: one line per event, with the time, who (coloured per instance) and what.

const useColor = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;

/** @typedef {(text: string | number) => string} Paint */

/**
 * @param {string} code
 * @returns {Paint}
 */
const paint = (code) => (text) => (useColor ? `\x1b[${code}m${text}\x1b[0m` : String(text));

export const style = {
  dim: paint('2'),
  bold: paint('1'),
  red: paint('31'),
  yellow: paint('33'),
  leader: paint('1;32'),
};
export const INSTANCE_COLORS = ['36', '35', '33', '34', '96', '95', '93', '94', '37'].map(paint);
const SOURCE_WIDTH = 11;

// A closed pipe (`npm start | head`) must not crash the demo and leave children behind.
process.stdout.on('error', () => undefined);

function timestamp() {
  const now = new Date();
  /** @param {number} n @param {number} [width] */
  const pad = (n, width = 2) => String(n).padStart(width, '0');
  return `${pad(now.getHours())}:${pad(now.getMinutes())}:${pad(now.getSeconds())}.${Math.floor(now.getMilliseconds() / 100)}`;
}

/**
 * One line: time, who (coloured per instance), what.
 * @param {string} source
 * @param {string} text
 * @param {Paint} [colorize]
 */
export function say(source, text, colorize = (s) => String(s)) {
  console.log(`${style.dim(timestamp())} ${colorize(source.padEnd(SOURCE_WIDTH))} ${text}`);
}

/** @param {number} ms */
export const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

export const rule = () => style.dim('─'.repeat(78));
