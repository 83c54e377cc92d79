// @ts-check
// Where the instances keep their lease: your storage account when configured, else a fresh Azurite.
import { startAzurite } from '../lib/azurite.mjs';
import { portFree } from '../lib/ports.mjs';
import { say, style } from './output.mjs';

/**
 * The env the instances need to reach the store; starts Azurite (in memory) unless you bring an account.
 * @param {import('./cluster.mjs').Cluster} cluster
 * @returns {Promise<Record<string, string>>}
 */
export async function storageConnection(cluster) {
  const { state } = cluster;
  if (process.env.AZURE_STORAGE_CONNECTION_STRING) {
    // Only the account name: the rest of a connection string is a secret.
    const account =
      /AccountName=([^;]+)/i.exec(process.env.AZURE_STORAGE_CONNECTION_STRING)?.[1] ?? 'from the connection string';
    say('demo', `using your storage account (${account}) from AZURE_STORAGE_CONNECTION_STRING`);
    return {};
  }
  if (process.env.AZURE_STORAGE_ACCOUNT_URL) {
    say(
      'demo',
      `using ${new URL(process.env.AZURE_STORAGE_ACCOUNT_URL).host} from AZURE_STORAGE_ACCOUNT_URL, with DefaultAzureCredential`,
    );
    return {};
  }
  say('demo', 'no AZURE_STORAGE_CONNECTION_STRING: starting Azurite (the Azure Storage emulator) in memory');
  const azurite = await startAzurite({ outliveCtrlC: true });
  state.azurite = azurite;
  cluster.children.add(azurite.child);
  say('azurite', `blob service on ${azurite.blobEndpoint} (pid ${azurite.child.pid})`);
  azurite.child.once('exit', (code, signal) => {
    if (!state.stopping) {
      say('azurite', style.red(`exited unexpectedly (${signal ?? `code ${code}`}); stopping the demo`));
      void cluster.shutdown(1);
    }
  });
  return { AZURE_STORAGE_CONNECTION_STRING: azurite.connectionString, AZURE_STORAGE_ACCOUNT_URL: '' };
}

/**
 * Whether every instance port is free; says which one is not.
 * @param {import('./options.mjs').DemoOptions} options
 */
export async function instancePortsFree({ basePort, instanceCount }) {
  for (let port = basePort; port < basePort + instanceCount; port++) {
    if (!(await portFree(port))) {
      say('demo', style.red(`port ${port} is in use; choose other ports with: npm start -- --port <first port>`));
      return false;
    }
  }
  return true;
}
