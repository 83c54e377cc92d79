// @ts-check
// The shell half of scripts/check-docs.mjs: the commands of ```bash/```sh/```shell/```console blocks
// that this repository can answer for.
//   - `leaderlease … --help` (also `npx leaderlease`, `node dist/esm/cli/bin.js`): the built CLI is run
//     with those arguments and must exit 0;
//   - any other `leaderlease …`: its command must exist and every flag must be in that command's help;
//   - `npm run <script>`, `npm start`, `npm test`: the script must be in the root package.json, except
//     in a block fenced ```bash user (a reader's own app, whose scripts are not ours to check).
// In a ```console block only the lines starting with `$ ` are commands (the rest is output).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const SHELL_LANGS = new Set(['bash', 'sh', 'shell', 'console', 'zsh']);

/**
 * @param {string} root the repository (its dist/ built)
 */
export function createShellChecker(root) {
  const bin = join(root, 'dist/esm/cli/bin.js');
  const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts ?? {};
  /** @type {Map<string, { status: number | null, output: string }>} */
  const runs = new Map();
  /** @param {string[]} args */
  const cli = (args) => {
    const key = JSON.stringify(args);
    let run = runs.get(key);
    if (!run) {
      const env = { ...process.env };
      delete env.LEADER_ELECTION_STORE;
      delete env.LEADER_ELECTION_CONNECTION;
      const result = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env, timeout: 20_000 });
      run = { status: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ?? ''}` };
      runs.set(key, run);
    }
    return run;
  };
  /** @param {string} help */
  const commandsOf = (help) => {
    const section = help.split(/^Commands:$/m)[1]?.split(/^\S/m)[0] ?? '';
    return new Set([...section.matchAll(/^ {2}([a-z][\w-]*)/gm)].map((m) => m[1]));
  };
  /** @param {string} help */
  const flagsOf = (help) => {
    const section = help.split(/^Options:$/m)[1]?.split(/^\S/m)[0] ?? '';
    return new Set([...section.matchAll(/(?:^|[\s,])(--?[a-zA-Z][\w-]*)/gm)].map((m) => m[1]));
  };

  /**
   * @param {import('./docs-markdown.mjs').CodeBlock} block
   * @param {string} page as reported
   * @returns {string[]} problems as `page:line: message`
   */
  return function checkShellBlock(block, page) {
    /** @type {string[]} */
    const problems = [];
    const userApp = block.words.includes('user');
    const lines = block.text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const at = `${page}:${block.line + 1 + i}`;
      let line = lines[i];
      // A continued line: the command is the joined text, reported at its first line.
      while (/\\\s*$/.test(line) && i + 1 < lines.length) line = `${line.replace(/\\\s*$/, ' ')}${lines[++i]}`;
      if (block.lang === 'console') {
        if (!/^\s*\$ /.test(line)) continue;
      }
      line = line.replace(/^\s*\$ /, '');
      for (const words of commands(line)) {
        while (words.length > 0 && /^[A-Za-z_]\w*=/.test(words[0].text)) words.shift();
        if (words[0]?.text === 'npx') words.splice(0, words[1]?.text === '--yes' || words[1]?.text === '-y' ? 2 : 1);
        const head = words[0]?.text ?? '';
        if (head === 'npm') {
          if (!userApp) problems.push(...checkNpm(words.slice(1), at));
          continue;
        }
        let args;
        if (head === 'leaderlease' || head.endsWith('/leaderlease')) args = words.slice(1);
        else if (head === 'node' && words[1]?.text.endsWith('dist/esm/cli/bin.js')) args = words.slice(2);
        else continue;
        problems.push(...checkCli(args, at));
      }
    }
    return problems;
  };

  /**
   * @param {Word[]} args
   * @param {string} at
   */
  function checkNpm(args, at) {
    const [verb, ...rest] = args.map((w) => w.text);
    if (rest.some((a) => /^(--prefix|-C|--workspace|-w)(=|$)/.test(a))) return [];
    /** @type {string | undefined} */
    let script;
    if (verb === 'start' || verb === 'test') script = verb;
    else if (verb === 't' || verb === 'tst') script = 'test';
    else if (verb === 'run' || verb === 'run-script' || verb === 'rum') script = rest.find((a) => !a.startsWith('-'));
    if (script === undefined || /[$<[]/.test(script)) return [];
    return script in scripts
      ? []
      : [`${at}: npm script "${script}" is not in package.json (a reader's app? fence the block \`\`\`bash user)`];
  }

  /**
   * @param {Word[]} args
   * @param {string} at
   */
  function checkCli(args, at) {
    const texts = args.map((w) => w.text);
    const top = cli(['--help']);
    if (top.status !== 0) return [`${at}: the built CLI does not answer --help (is dist/ built?):\n${top.output}`];
    if (texts.some((a) => a === '--help' || a === '-h')) {
      if (texts.some((a) => /[$<>[\]]/.test(a) || a === '...' || a === '…')) return [];
      const run = cli(texts);
      return run.status === 0 ? [] : [`${at}: \`leaderlease ${texts.join(' ')}\` exited ${run.status}:\n${run.output}`];
    }
    const command = texts[0] && !texts[0].startsWith('-') && !texts[0].startsWith('[') ? texts[0] : undefined;
    /** @type {string[]} */
    const problems = [];
    let flags = flagsOf(top.output);
    if (command !== undefined && command !== 'help') {
      if (!commandsOf(top.output).has(command)) return [`${at}: leaderlease has no command "${command}"`];
      const help = cli([command, '--help']).output;
      flags = new Set([...flags, ...flagsOf(help)]);
      // A command with subcommands (`jobs pause`): the subcommand must exist, and its flags count too.
      const sub = texts[1];
      if (commandsOf(help).size > 0 && sub !== undefined && /^[a-z]/.test(sub)) {
        if (!commandsOf(help).has(sub)) return [`${at}: leaderlease ${command} has no command "${sub}"`];
        flags = new Set([...flags, ...flagsOf(cli([command, sub, '--help']).output)]);
      }
    }
    for (const word of args) {
      if (word.quoted) continue;
      const flag = word.text.match(/^\[?(--?[a-zA-Z][\w-]*)/)?.[1];
      if (flag && !flags.has(flag)) {
        problems.push(`${at}: leaderlease ${command ?? ''} has no option ${flag}`.replace('  ', ' '));
      }
    }
    return problems;
  }
}

/**
 * @typedef {{ text: string, quoted: boolean }} Word
 */

/**
 * The simple commands of a shell line: split at `&&`, `||`, `;` and pipes, outside quotes and
 * brackets (a usage line's `[a | b]` stays one command); a `#` comment ends the line.
 * @param {string} line
 * @returns {Word[][]}
 */
export function commands(line) {
  /** @type {Word[][]} */
  const result = [[]];
  let word = '';
  let quoted = false;
  let inWord = false;
  let depth = 0;
  const end = () => {
    if (inWord) result[result.length - 1].push({ text: word, quoted });
    word = '';
    quoted = false;
    inWord = false;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "'" || c === '"') {
      const close = line.indexOf(c, i + 1);
      const stop = close === -1 ? line.length : close;
      word += line.slice(i + 1, stop);
      quoted = true;
      inWord = true;
      i = stop;
    } else if (c === '#' && !inWord) break;
    else if (/\s/.test(c)) end();
    else if (depth === 0 && (c === ';' || c === '|' || (c === '&' && line[i + 1] === '&'))) {
      end();
      if ((c === '|' || c === '&') && line[i + 1] === c) i++;
      result.push([]);
    } else {
      if (c === '[') depth++;
      if (c === ']') depth = Math.max(0, depth - 1);
      word += c;
      inWord = true;
    }
  }
  end();
  return result.filter((words) => words.length > 0);
}
