// @ts-check
// The little Markdown reading scripts/check-docs.mjs needs: fenced code blocks (with their info
// string), headings as GitHub slugs them (the anchors a link may name), and the links of the prose.
// Not a Markdown parser: fences, ATX/setext headings, inline/reference links and HTML anchors, which is
// all the docs use. A line inside a fence is code, never a heading or a link.

/**
 * @typedef {{ lang: string, words: string[], line: number, text: string }} CodeBlock
 *   `line` is the 1-based page line of the opening fence; the block's first line is `line + 1`.
 * @typedef {{ target: string, line: number }} Link
 * @typedef {{ blocks: CodeBlock[], anchors: Set<string>, links: Link[] }} Page
 */

/**
 * @param {string} source the page's Markdown
 * @returns {Page}
 */
export function readPage(source) {
  const lines = source.split('\n');
  /** @type {CodeBlock[]} */
  const blocks = [];
  /** @type {Link[]} */
  const links = [];
  const anchors = new Set();
  const slugs = new Map();
  /** @type {{ fence: string, block: CodeBlock, body: string[] } | undefined} */
  let open;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (open) {
      const close = line.match(/^ {0,3}(`{3,}|~{3,})\s*$/);
      if (close && close[1][0] === open.fence[0] && close[1].length >= open.fence.length) {
        open.block.text = open.body.join('\n');
        blocks.push(open.block);
        open = undefined;
      } else open.body.push(line);
      continue;
    }
    const fence = line.match(/^ {0,3}(`{3,}|~{3,})\s*([^`]*)$/);
    if (fence) {
      const [lang = '', ...words] = fence[2].trim().split(/\s+/).filter(Boolean);
      open = { fence: fence[1], block: { lang: lang.toLowerCase(), words, line: i + 1, text: '' }, body: [] };
      continue;
    }
    const atx = line.match(/^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/);
    const setext = i + 1 < lines.length && line.trim() !== '' && /^ {0,3}(=+|-+)\s*$/.test(lines[i + 1]);
    if (atx || (setext && !/^\s*([-*+]\s|>|\|)/.test(line))) {
      anchors.add(uniqueSlug(slugs, headingText(atx ? atx[1] : line.trim())));
    }
    for (const match of line.matchAll(/<a\s[^>]*?(?:id|name)=["']([^"']+)["']/gi)) anchors.add(match[1]);
    const prose = line.replace(/(`+)[^`]*?\1/g, '');
    for (const match of prose.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)>?(?:\s+["'(][^)]*)?\)/g)) {
      links.push({ target: match[1], line: i + 1 });
    }
    for (const match of prose.matchAll(/<a\s[^>]*?href=["']([^"']+)["']/gi))
      links.push({ target: match[1], line: i + 1 });
    const definition = prose.match(/^ {0,3}\[([^\]]+)\]:\s*<?(\S+?)>?(?:\s.*)?$/);
    if (definition) links.push({ target: definition[2], line: i + 1 });
  }
  if (open) blocks.push({ ...open.block, text: open.body.join('\n') });
  return { blocks, anchors, links };
}

/**
 * The text GitHub renders for a heading's source: inline code kept without its backticks, links as
 * their text, HTML tags and emphasis markers dropped.
 * @param {string} source
 */
export function headingText(source) {
  /** @type {string[]} */
  const code = [];
  let text = source.replace(/(`+)\s?(.*?)\s?\1/g, (_, __, inner) => {
    code.push(inner);
    return `\uE000${code.length - 1}\uE000`;
  });
  text = text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/\\(.)/g, '$1')
    .replace(/(^|[^\w])_+([^_\s](?:.*?[^_\s])?)_+(?=[^\w]|$)/g, '$1$2')
    .replace(/\*+/g, '');
  return text.replace(/\uE000(\d+)\uE000/g, (_, n) => code[Number(n)]);
}

/**
 * GitHub's heading anchors (github-slugger): lower case, punctuation removed (letters, digits, marks,
 * `-` and `_` stay), each space a hyphen; a repeated slug gets `-1`, `-2`, ….
 * @param {Map<string, number>} seen
 * @param {string} text
 */
export function uniqueSlug(seen, text) {
  const base = text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
  let slug = base;
  while (seen.has(slug)) {
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    slug = `${base}-${n}`;
  }
  seen.set(slug, 0);
  return slug;
}
