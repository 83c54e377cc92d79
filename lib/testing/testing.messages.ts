/**
 * The texts of the testing kit (@leaderlease/nestjs/testing). None may include a connection string,
 * account key or SAS: callers pass only names, numbers and already-redacted error messages.
 */
export const testingMessages = {
  testingNotRunning: (method: string, state: string) =>
    `TestingLeadership.${method}(): the leader election is ${state === 'idle' ? 'not started: call await app.init() (or moduleRef.init()) first' : 'stopped: the application was closed'}`,
  testingInvalidTerm: (value: unknown) => `term must be a positive safe integer (got ${String(value)})`,
  testingInvalidIdentity: (value: unknown) =>
    `identity must be a non-empty string or undefined (got ${JSON.stringify(value)})`,
  testingBoundElsewhere: (target: string) =>
    `TestingLeadership.bind(): ${target} is already bound to another application's leader election`,
  testingNotAnObject: (value: unknown) => `TestingLeadership.bind() takes an object (got ${String(value)})`,
} as const;
