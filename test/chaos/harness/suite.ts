// What every chaos spec file shares: one Azurite for its scenarios, its results table printed
// after the file, and `scenario()`, which always finishes a scenario and removes its folder.
import { sharedAzurite } from './bounds.js';
import { Results } from './results.js';
import { Scenario } from './scenario.js';

/**
 * Call inside the file's `describe`: `store.port` is the file's Azurite once the tests run, and the
 * file's rows collected in `results` are printed after its last test.
 */
export function chaosFile(file: string): { store: { port: number }; results: Results } {
  const store = { port: 0 };
  const results = new Results(file);
  let azurite: Awaited<ReturnType<typeof sharedAzurite>> | undefined;
  beforeAll(async () => {
    azurite = await sharedAzurite();
    store.port = azurite.port;
  });
  afterAll(async () => {
    results.flush();
    await azurite?.stop();
  });
  return { store, results };
}

/**
 * Runs `body` on a new scenario whose proxies forward to `storePort`, then — however `body` ends —
 * finishes it (closes what still runs), runs `afterFinish` (the scenario's own servers and tables),
 * and removes its folder, keeping the ledger for inspection when `body` threw.
 */
export async function scenario(
  name: string,
  storePort: number,
  body: (s: Scenario) => Promise<void>,
  afterFinish?: (ok: boolean) => Promise<void>,
): Promise<void> {
  const s = new Scenario(name, storePort);
  let ok = false;
  try {
    await body(s);
    ok = true;
  } finally {
    await s.finish();
    await afterFinish?.(ok);
    s.cleanup(!ok);
  }
}
