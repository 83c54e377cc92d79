import type { TestService } from './service.js';

export default async function globalTeardown(): Promise<void> {
  const services = (globalThis as { __testServices?: TestService[] }).__testServices ?? [];
  await Promise.all(services.map((service) => service.stop()));
}
