// Azurite for the test run: the tooling's shared starter (scripts/lib/azurite.mjs), plus the env vars
// that hand its address to the test workers.
import { type Azurite, type AzuriteOptions, startAzurite as start } from '../../scripts/lib/azurite.mjs';
import type { TestService } from './service.js';

export type { AzuriteOptions } from '../../scripts/lib/azurite.mjs';
export { AZURITE_ACCOUNT, AZURITE_ACCOUNT_KEY } from '../../scripts/lib/azurite.mjs';
// A loopback port nobody listens on right now (also: an "unreachable server" for tests).
export { freePort } from '../../scripts/lib/ports.mjs';

export interface AzuriteService extends TestService, Azurite {
  env: { AZURITE_CONNECTION_STRING: string; AZURITE_BLOB_PORT: string };
}

/** Starts one Azurite blob service; `stop()` ends it (SIGTERM, SIGKILL after 5 s) and waits for exit. */
export async function startAzurite(options: AzuriteOptions = {}): Promise<AzuriteService> {
  const azurite = await start(options);
  return {
    ...azurite,
    env: { AZURITE_CONNECTION_STRING: azurite.connectionString, AZURITE_BLOB_PORT: String(azurite.port) },
  };
}
