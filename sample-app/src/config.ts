import { AzureBlobLeaseStore, type LeaderElectionModuleOptions } from '@leaderlease/nestjs';

/** The sample app's elections when the environment names none: the first is the default. */
const DEFAULT_ELECTIONS = ['reports', 'billing', 'cleanup'];

/**
 * The lease names all replicas compete for: `ELECTIONS` (comma-separated), else `ELECTION` (one),
 * else `reports,billing,cleanup`. The first is the default election.
 */
export function electionNames(env: NodeJS.ProcessEnv = process.env): string[] {
  const listed = env.ELECTIONS ? env.ELECTIONS.split(',') : env.ELECTION ? [env.ELECTION] : DEFAULT_ELECTIONS;
  const names = [...new Set(listed.map((name) => name.trim()).filter((name) => name !== ''))];
  return names.length > 0 ? names : DEFAULT_ELECTIONS;
}

/**
 * Which election each job runs under. Read when the job classes are defined, because decorators take
 * the name then: the first three elections, and the default one for a job whose election is not
 * configured (`ELECTION=x` runs all three jobs under `x`, as a one-election app would).
 */
export const jobElections = (() => {
  const [reports, billing = reports, cleanup = reports] = electionNames() as [string, ...string[]];
  return { reports, billing, cleanup };
})();

/**
 * The election settings, from the environment:
 * - `AZURE_STORAGE_CONNECTION_STRING`, or `AZURE_STORAGE_ACCOUNT_URL` (authenticated with
 *   `DefaultAzureCredential`: managed identity, workload identity, `az login`, …);
 * - `AZURE_STORAGE_CONTAINER` (optional, default `leader-election`);
 * - `ELECTIONS` / `ELECTION`: the lease names (see {@link electionNames});
 * - `INSTANCE_ID`: this replica's name in logs and in the lease (default host-pid-random);
 * - `ADVERTISE`: where other replicas send clients to reach this one when it leads (shown on their
 *   status page as the leader's address); default `http://127.0.0.1:<PORT>`, right for one machine
 *   only: in a cluster, set it to the pod's or VM's own URL;
 * - `PRIORITY`: this replica's priority (an integer, default 0): a follower with a higher priority
 *   than an election's leader asks it for the lease, e.g. to keep leadership in the primary zone.
 */
export async function leaderElectionOptions(
  env: NodeJS.ProcessEnv = process.env,
): Promise<LeaderElectionModuleOptions> {
  return {
    store: await createLeaseStore(env),
    elections: electionNames(env),
    identity: env.INSTANCE_ID || undefined,
    advertise: env.ADVERTISE || `http://127.0.0.1:${httpPort(env)}`,
    // Not a number: the module refuses it at startup, naming the option and its range.
    priority: env.PRIORITY ? Number(env.PRIORITY) : undefined,
    // A job still running after a minute is stuck: health goes down naming it, and
    // leader_election_stuck_work_seconds shows it. The queue pump opts out (it runs all term).
    stuckAfterMs: 60_000,
  };
}

export function httpPort(env: NodeJS.ProcessEnv = process.env): number {
  return Number(env.PORT ?? 3000);
}

async function createLeaseStore(env: NodeJS.ProcessEnv): Promise<AzureBlobLeaseStore> {
  const container = env.AZURE_STORAGE_CONTAINER || undefined;
  if (env.AZURE_STORAGE_CONNECTION_STRING) {
    return new AzureBlobLeaseStore({ connectionString: env.AZURE_STORAGE_CONNECTION_STRING, container });
  }
  if (env.AZURE_STORAGE_ACCOUNT_URL) {
    // Loaded only when used: apps on connection strings need not install @azure/identity.
    const { DefaultAzureCredential } = await import('@azure/identity');
    return new AzureBlobLeaseStore({
      url: env.AZURE_STORAGE_ACCOUNT_URL,
      credential: new DefaultAzureCredential(),
      container,
    });
  }
  throw new Error(
    'Set AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT_URL (with a credential DefaultAzureCredential can find). ' +
      'For a local demo without an Azure account run `npm start`: it starts an embedded Azurite.',
  );
}
