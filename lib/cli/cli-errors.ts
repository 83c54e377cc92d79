import { LeaseStoreError } from '../shared/errors.js';
import { cliMessages } from './cli.messages.js';

/** The CLI's exit codes: scripts branch on them, so they never change meaning (listed in `--help`). */
export const ExitCode = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  store: 3,
  noLeader: 4,
  waitTimedOut: 5,
  unsupported: 6,
  runFailed: 7,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** An outcome the CLI expected: its message is printed as is, and the process exits with `exitCode`. */
export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/**
 * The exit code and the one line to print for anything a command threw. Store errors carry
 * messages the stores already redacted; anything else shows its message only (a stack could quote
 * the arguments of a driver call).
 */
export function describeFailure(error: unknown, storeName: string): { code: ExitCode; message: string } {
  if (error instanceof CliError) return { code: error.exitCode, message: error.message };
  if (error instanceof LeaseStoreError) {
    return { code: ExitCode.store, message: cliMessages.storeFailed(storeName, error.kind, error.message) };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: ExitCode.unexpected, message: cliMessages.unexpected(message) };
}
