/**
 * The texts of the Nest integration (module options, decorators, explorer, guard, service). None may
 * include a connection string, account key or SAS: callers pass only names, numbers and redacted messages.
 */
export const nestMessages = {
  // Nest module (issue 3: module, service, @LeaderOnly, guard, hooks, health).
  optionNotNonNegative: (option: string, value: unknown) =>
    `${option} must be a non-negative finite number of milliseconds (got ${String(value)})`,
  optionNotBoolean: (option: string, value: unknown) => `${option} must be true or false (got ${String(value)})`,
  optionNotObject: (option: string, value: unknown) => `${option} must be an object (got ${String(value)})`,
  optionUnknown: (option: string, known: readonly string[]) =>
    `${option} is not a known option (known: ${known.join(', ')})`,
  notLeader: (election: string) => `This instance is not the leader of "${election}"; retry later.`,
  refusedNonHttp: (type: string, election: string) =>
    `refused a ${type} call: not the leader of "${election}" (answered with the transport's Forbidden error)`,
  unbound: (target: string) =>
    `${target} is @LeaderOnly() but its instance is not bound to an application's leader election, so nobody can tell whether it may run: it was created with new, is request-scoped or transient, or its application is not initialised yet. Let Nest create it in an application that imports LeaderElectionModule and call init() (app.init() / moduleRef.init()); in unit tests import LeaderElectionTestingModule from @leaderlease/nestjs/testing, or bind an instance made with new by TestingLeadership.bind(instance)`,
  nonStaticProvider: (target: string) =>
    `${target} is @LeaderOnly() or a leadership hook in a request-scoped or transient provider: its calls cannot be tracked, so outside routes they throw (routes stay protected by LeaderOnlyGuard) and hooks are not called`,
  boundElsewhere: (target: string) =>
    `${target} is one instance shared by several applications; it stays bound to the first one's leader election`,
  hookFailed: (target: string, hook: string, error: unknown) =>
    `@${hook}() handler ${target} failed: ${error instanceof Error ? error.message : String(error)}`,
  hookBadElection: (kind: string, value: unknown) =>
    `the ${kind} hook decorator takes an election name, a non-empty string (got ${String(value)})`,
  electionExists: (election: string) =>
    `addElection("${election}"): this application already runs an election of that name`,
  electionsOption: (detail: string) => `LeaderElectionModule options: ${detail}`,
  removeDefaultElection: (election: string) =>
    `removeElection("${election}"): the default election (the first configured) cannot be removed`,
  storeCloseFailed: (election: string, store: string, message: string) =>
    `leader election "${election}": closing ${store} failed: ${message}`,
  notAMethod: (target: string) => `@LeaderOnly() decorates methods; ${target} is not one`,

  // Metrics (issue 15): which way the service records them.
  metricsWiring: (wiring: 'recording' | 'no-api' | 'no-sdk') =>
    wiring === 'recording'
      ? 'metrics: recording through the registered OpenTelemetry MeterProvider (meter "@leaderlease/nestjs")'
      : wiring === 'no-sdk'
        ? 'metrics: not recorded: @opentelemetry/api is installed but no SDK MeterProvider was registered when the module started (register it before NestFactory.create)'
        : 'metrics: not recorded: @opentelemetry/api is not installed (an optional peer; install it and an SDK to record)',

  // Stuck leader work (stuckAfterMs, resignWhenStuck) and @LeaderOnly() options.
  stuckAfterRange: (value: unknown, max: number) =>
    `stuckAfterMs must be a whole number of milliseconds from 1 to ${max}, or undefined to turn detection off (got ${String(value)})`,
  resignWhenStuckNeedsStuckAfter:
    'resignWhenStuck: true needs stuckAfterMs: how long leader work may run before it counts as stuck',
  onElectedOptions: (target: string, detail: string) => `@OnElected() on ${target}: ${detail}`,
  stuckAfterOption: (value: unknown, max: number) =>
    `stuckAfterMs must be a whole number of milliseconds from 1 to ${max}, or false for work that runs all term and is never stuck (got ${typeof value === 'string' ? JSON.stringify(value) : String(value)})`,
  leaderOnlyOptions: (target: string, detail: string) => `@LeaderOnly() on ${target}: ${detail}`,
  perTickNeedsState: (target: string, store: string) =>
    `@LeaderOnly({ once: 'per-tick' }) on ${target}: ${store} does not support leader state, which once-per-tick runs are recorded in; use a built-in store`,
  leaderOnlyBadValue: (option: string, value: unknown, expected: string) =>
    `${option} must be ${expected} (got ${typeof value === 'string' ? JSON.stringify(value) : String(value)})`,
  leaderOnlyMissedWithoutOnce: "missed applies to once: 'per-tick' only; add once: 'per-tick' or remove missed",
  // Issue 28: the catch-up window of a once-per-tick job.
  catchUpWindowOption: (value: unknown, min: number, max: number) =>
    `catchUpWindowMs must be a whole number of milliseconds from ${min} (1 s) to ${max} (366 days) (got ${typeof value === 'string' ? JSON.stringify(value) : String(value)})`,
  catchUpWindowWithoutCatchUp:
    "catchUpWindowMs applies to once: 'per-tick' with missed: 'catch-up' only; add both or remove catchUpWindowMs",
  // Issue 24, defect 4: a job's record is found by its key alone.
  tickJobOwner: (label: string, provider: string, module: string | undefined) =>
    module ? `${label} (provider ${provider} in ${module})` : `${label} (${provider})`,
} as const;
