import { hostname, userInfo } from 'node:os';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { ELECTION_PATTERN } from '../election/elector-options.js';
import type { LeaseStore } from '../stores/lease-store.js';
import { cliMessages } from './cli.messages.js';
import { CliError, describeFailure, ExitCode } from './cli-errors.js';
import { type CliOutput, redactingOutput } from './cli-output.js';
import { handoverCommand } from './handover.command.js';
import { statusCommand } from './status.command.js';
import {
  buildStore,
  checkNamespaceOptions,
  ENV,
  STORE_KINDS,
  type StoreConfig,
  type StoreKind,
} from './store-factory.js';

export interface CliContext {
  output: CliOutput;
  env: Readonly<Record<string, string | undefined>>;
  /** A signal that fires on Ctrl-C; asked for only by `status --watch`, so Ctrl-C kills anything else. */
  interrupt?: () => AbortSignal;
  /** Builds the store; tests pass one that returns an in-memory store. */
  buildStore?: (config: StoreConfig, connectionSource: string) => Promise<LeaseStore>;
  /** Overrides `cli:<os user>@<host>`. */
  requestedBy?: string;
}

interface CommonOptions {
  store?: string;
  connection?: string;
  container?: string;
  table?: string;
  schema?: string;
  prefix?: string;
  timeoutMs: number;
  json?: boolean;
}

/**
 * Runs the CLI on `argv` (the arguments after the script) and resolves its exit code; never throws
 * and never exits the process. Commander parses; everything it prints and everything the commands
 * print goes through `context.output`, with the connection redacted.
 */
export async function runCli(argv: readonly string[], context: CliContext): Promise<ExitCode> {
  const output = redactingOutput(
    redactingOutput(context.output, context.env[ENV.connection]),
    connectionArgument(argv),
  );
  let storeName = 'the store';
  let result: ExitCode = ExitCode.ok;
  const withStore = async (options: CommonOptions, run: (store: LeaseStore) => Promise<ExitCode>) => {
    const { config, source } = storeConfig(options, context.env);
    const store = await (context.buildStore ?? buildStore)(config, source);
    storeName = store.name;
    try {
      result = await run(store);
    } finally {
      await store.close?.().catch(() => undefined);
    }
  };

  const program = cliProgram(output);
  addCommonOptions(
    program
      .command('status')
      .description('show the leader, term, meta and pending handover request of each election')
      .option('--election <names>', 'an election (repeatable or comma-separated); default: all', collectElections, [])
      .option('--watch', 'refresh until Ctrl-C')
      .option('--interval <ms>', 'refresh interval of --watch', integer('--interval', 100, 3_600_000), 2_000),
  ).action(async (options: CommonOptions & { election: string[]; watch?: boolean; interval: number }) =>
    withStore(options, (store) =>
      statusCommand(
        store,
        {
          elections: options.election,
          timeoutMs: options.timeoutMs,
          json: !!options.json,
          watch: !!options.watch,
          intervalMs: options.interval,
          stop: options.watch ? context.interrupt?.() : undefined,
        },
        output,
      ),
    ),
  );

  addCommonOptions(
    program
      .command('handover')
      .description('ask the leader of an election to hand its lease over (needs write access to the store)')
      .requiredOption('--election <name>', 'the election', election)
      .option('--to <identity>', 'the identity that should lead next; default: any other replica', text('--to', 256))
      .option('--reason <text>', 'why, recorded with the request', text('--reason', 500), 'operator')
      .option('--wait', 'wait until the lease moved (to --to, when given) and print the new leader')
      .option('--timeout <ms>', 'how long --wait waits', integer('--timeout', 1, 86_400_000), 60_000)
      .option('--interval <ms>', 'poll interval of --wait', integer('--interval', 50, 60_000), 500),
  ).action(
    async (
      options: CommonOptions & {
        election: string;
        to?: string;
        reason: string;
        wait?: boolean;
        timeout: number;
        interval: number;
      },
    ) =>
      withStore(options, (store) =>
        handoverCommand(
          store,
          {
            election: options.election,
            to: options.to,
            reason: options.reason,
            requestedBy: context.requestedBy ?? requestedBy(),
            timeoutMs: options.timeoutMs,
            wait: !!options.wait,
            waitTimeoutMs: options.timeout,
            pollIntervalMs: options.interval,
            json: !!options.json,
          },
          output,
        ),
      ),
  );

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return result;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help prints and ends with 0; every parse error is a usage error, whatever commander's code.
      return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    }
    const failure = describeFailure(error, storeName);
    output.err(failure.message);
    return failure.code;
  }
}

function cliProgram(output: CliOutput): Command {
  return new Command('leaderlease')
    .description('Operator tool for @leaderlease/nestjs: inspect elections and request handovers.')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => output.out(text.replace(/\n$/, '')),
      writeErr: (text) => output.err(text.replace(/\n$/, '')),
    })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', `\n${cliMessages.environment(ENV.store, ENV.connection)}\n\n${cliMessages.exitCodes}`);
}

function addCommonOptions(command: Command): Command {
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

function storeConfig(options: CommonOptions, env: CliContext['env']): { config: StoreConfig; source: string } {
  const kind = options.store ?? env[ENV.store];
  if (!kind) throw new CliError(ExitCode.usage, cliMessages.storeRequired(ENV.store, STORE_KINDS));
  if (!(STORE_KINDS as readonly string[]).includes(kind)) {
    throw new CliError(ExitCode.usage, cliMessages.storeUnknown(ENV.store, kind, STORE_KINDS));
  }
  const connection = options.connection ?? env[ENV.connection];
  if (!connection) throw new CliError(ExitCode.usage, cliMessages.connectionRequired(ENV.connection));
  const { container, table, schema, prefix } = options;
  checkNamespaceOptions(kind as StoreKind, options);
  return {
    config: { kind: kind as StoreKind, connection, container, table, schema, prefix },
    source: options.connection !== undefined ? '--connection' : ENV.connection,
  };
}

/** The value of `--connection` in `argv`, if any, found before parsing so even a parse error cannot echo it. */
function connectionArgument(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--connection') return argv[i + 1];
    if (argv[i].startsWith('--connection=')) return argv[i].slice('--connection='.length);
  }
  return undefined;
}

function requestedBy(): string {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (a container running under an arbitrary uid).
    user = process.env.USER ?? process.env.USERNAME ?? 'unknown';
  }
  return `cli:${user}@${hostname()}`;
}

function integer(option: string, min: number, max: number): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (!/^\d+$/.test(value.trim()) || parsed < min || parsed > max) {
      throw new InvalidArgumentError(cliMessages.badInteger(option, min, max));
    }
    return parsed;
  };
}

function text(option: string, max: number): (value: string) => string {
  return (value) => {
    if (value.trim() === '' || value.length > max) throw new InvalidArgumentError(cliMessages.badText(option, max));
    return value;
  };
}

function election(value: string): string {
  if (!ELECTION_PATTERN.test(value)) throw new InvalidArgumentError(cliMessages.badElection(value));
  return value;
}

function collectElections(value: string, previous: string[]): string[] {
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length === 0) throw new InvalidArgumentError(cliMessages.badElection(value));
  return [...previous, ...names.map(election)];
}
