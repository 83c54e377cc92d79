// Starts the servers the tests need once per `npm test` run and hands their addresses to the
// test workers through environment variables (workers inherit the env of this process).
import type { TestService } from './service.js';

// Jest loads global setup outside its ESM module map, so its `.js` → `.ts` mapping does not
// apply: import by extension-less name and let the registered transform find the `.ts` file.
const load = (name: string) => import(name);

const starters: Array<() => Promise<TestService>> = [
  async () => (await load('./azurite')).startAzurite(),
  async () => (await load('./etcd')).startEtcd(),
];

export default async function globalSetup(): Promise<void> {
  const services = await Promise.all(starters.map((start) => start()));
  (globalThis as { __testServices?: TestService[] }).__testServices = services;
  for (const service of services) Object.assign(process.env, service.env);
}
