#!/usr/bin/env node
// The `leaderlease` command. All logic is in main.ts (tested in-process); this file only
// connects it to the process: argv, stdout/stderr, the environment and Ctrl-C.
import { runCli } from './main.js';

/** How long the process may linger after the command finished (a driver's socket closing). */
const EXIT_GRACE_MS = 2_000;

runCli(process.argv.slice(2), {
  output: {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
    isTTY: process.stdout.isTTY === true,
  },
  env: process.env,
  interrupt: () => {
    const controller = new AbortController();
    process.once('SIGINT', () => controller.abort());
    return controller.signal;
  },
}).then((code) => {
  process.exitCode = code;
  // Every store is closed by now; should a driver still hold a handle, an operator's script must not hang.
  setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
});
