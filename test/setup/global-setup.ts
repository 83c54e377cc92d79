// Starts the servers the tests need once per `npm test` run and hands their addresses to the
// test workers through environment variables (workers inherit the env of this process).
import type { TestService } from './service.js';

const starters: Array<() => Promise<TestService>> = [
  async () => (await import('./azurite.js')).startAzurite(),
  async () => (await import('./etcd.js')).startEtcd(),
];

export default async function globalSetup(): Promise<void> {
  const services = await Promise.all(starters.map((start) => start()));
  (globalThis as { __testServices?: TestService[] }).__testServices = services;
  for (const service of services) Object.assign(process.env, service.env);
}
