// The harness's own checks must be able to fail: a process that prints a secret is caught.
import { spawn } from 'node:child_process';
import { AZURITE_ACCOUNT_KEY } from '../setup/azurite.js';
import { Instance, Scenario } from './harness.js';

describe('chaos harness self-check', () => {
  it('catches a secret printed by any process, verbatim or URL-encoded', async () => {
    const s = new Scenario('self-check', 1);
    const print = (text: string, stream: 'log' | 'error') =>
      new Instance(
        `${stream}-printer`,
        spawn(process.execPath, ['-e', `console.${stream}(process.argv[1])`, text], {
          stdio: ['pipe', 'pipe', 'pipe'],
        }),
        undefined,
      );
    const verbatim = print(`key=${AZURITE_ACCOUNT_KEY}`, 'log');
    const encoded = print(`sig=${encodeURIComponent(AZURITE_ACCOUNT_KEY)}`, 'error');
    const clean = print('nothing to see', 'log');
    s.instances.push(verbatim, encoded, clean);
    await Promise.all(s.instances.map((i) => i.exited));
    await s.waitFor('all output', () => s.instances.every((i) => i.output.length > 0), 5_000);

    expect(s.leakedSecrets()).toEqual([
      expect.stringMatching(/^log-printer printed a secret on stdout/),
      expect.stringMatching(/^error-printer printed a secret on stderr/),
    ]);
    s.cleanup(false);
  });
});
