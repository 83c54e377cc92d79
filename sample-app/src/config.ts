import { AzureBlobLeaseStore, type LeaderElectionModuleOptions } from 'nestjs-leader-election';

/**
 * The election settings, from the environment:
 * - `AZURE_STORAGE_CONNECTION_STRING`, or `AZURE_STORAGE_ACCOUNT_URL` (authenticated with
 *   `DefaultAzureCredential`: managed identity, workload identity, `az login`, …);
 * - `AZURE_STORAGE_CONTAINER` (optional, default `leader-election`);
 * - `ELECTION`: the lease name all replicas compete for (default `sample-app`);
 * - `INSTANCE_ID`: this replica's name in logs and in the lease (default host-pid-random).
 */
export async function leaderElectionOptions(
  env: NodeJS.ProcessEnv = process.env,
): Promise<LeaderElectionModuleOptions> {
  return {
    store: await createLeaseStore(env),
    election: env.ELECTION || 'sample-app',
    identity: env.INSTANCE_ID || undefined,
  };
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
