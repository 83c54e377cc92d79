import { Command, CommanderError } from 'commander';
import type { LeaseStore } from '../stores/lease-store.js';
import { cliMessages } from './cli.messages.js';
import { CliError, describeFailure, ExitCode } from './cli-errors.js';
import {
  addCommonOptions,
  type CommonOptions,
  collectElections,
  election,
  integer,
  requestedBy,
  text,
} from './cli-options.js';
import { type CliOutput, redactingOutput } from './cli-output.js';
import { handoverCommand } from './handover.command.js';
import { addJobsCommands } from './jobs.program.js';
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

  addJobsCommands(program, {
    output,
    withStore,
    requestedBy: () => context.requestedBy ?? requestedBy(),
  });

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
    .description(
      'Operator tool for @leaderlease/nestjs: inspect elections, request handovers, control leader-only jobs.',
    )
    .exitOverride()
    .configureOutput({
      writeOut: (text) => output.out(text.replace(/\n$/, '')),
      writeErr: (text) => output.err(text.replace(/\n$/, '')),
    })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', `\n${cliMessages.environment(ENV.store, ENV.connection)}\n\n${cliMessages.exitCodes}`);
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
