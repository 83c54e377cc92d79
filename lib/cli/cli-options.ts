import { hostname, userInfo } from 'node:os';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { ELECTION_PATTERN } from '../election/elector-options.js';
import { isStorableText } from '../shared/identity.js';
import { cliMessages } from './cli.messages.js';
import { ENV, STORE_KINDS } from './store-factory.js';

/** The options every command takes: the store, its namespace, the call bound and the output form. */
export interface CommonOptions {
  store?: string;
  connection?: string;
  container?: string;
  table?: string;
  schema?: string;
  prefix?: string;
  timeoutMs: number;
  json?: boolean;
}

/** Adds the {@link CommonOptions} and the exit codes to a command's help. */
export function addCommonOptions(command: Command): Command {
  return command
    .addOption(new Option('--store <kind>', `the store (default: $${ENV.store})`).choices(STORE_KINDS))
    .option('--connection <value>', `the connection (default: $${ENV.connection}); visible in the process list`)
    .option('--container <name>', 'azure: the container of the lease blobs')
    .option('--table <name>', 'postgres, mysql: the lease table')
    .option('--schema <name>', 'postgres: the schema of the table')
    .option('--prefix <prefix>', 'azure: blob name prefix; redis, etcd: key prefix')
    .option('--timeout-ms <ms>', 'bound of each store call', integer('--timeout-ms', 100, 600_000), 10_000)
    .option('--json', 'print JSON instead of text')
    .addHelpText('after', `\n${cliMessages.exitCodes}`);
}

/** `cli:<os user>@<host>`: who asked, as recorded with a handover request or a job command. */
export function requestedBy(): string {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (a container running under an arbitrary uid).
    user = process.env.USER ?? process.env.USERNAME ?? 'unknown';
  }
  return `cli:${user}@${hostname()}`;
}

/** A parser of whole milliseconds from `min` to `max`. */
export function integer(option: string, min: number, max: number): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (!/^\d+$/.test(value.trim()) || parsed < min || parsed > max) {
      throw new InvalidArgumentError(cliMessages.badInteger(option, min, max));
    }
    return parsed;
  };
}

/** A parser of non-empty text of at most `max` characters that every store can keep. */
export function text(option: string, max: number): (value: string) => string {
  return (value) => {
    if (value.trim() === '' || value.length > max || !isStorableText(value)) {
      throw new InvalidArgumentError(cliMessages.badText(option, max));
    }
    return value;
  };
}

/** A parser of one election name. */
export function election(value: string): string {
  if (!ELECTION_PATTERN.test(value)) throw new InvalidArgumentError(cliMessages.badElection(value));
  return value;
}

/** A parser of `--election` given several times and/or comma-separated, in order. */
export function collectElections(value: string, previous: string[]): string[] {
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length === 0) throw new InvalidArgumentError(cliMessages.badElection(value));
  return [...previous, ...names.map(election)];
}
