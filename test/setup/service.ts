/** A server started for the test run: the env vars that locate it, and how to stop it. */
export interface TestService {
  env: Record<string, string>;
  stop(): Promise<void>;
}
