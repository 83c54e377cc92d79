// etcd for the test run: the tooling's shared starter (scripts/lib/etcd.mjs), plus the env var that
// hands its address to the test workers.
import { type Etcd, startEtcd as start } from '../../scripts/lib/etcd.mjs';
// Type-only: Jest loads global-setup files without its module mapper, so runtime imports of
// sibling `.js` specifiers would not resolve here (scripts/lib's `.mjs` files are named as they are).
import type { TestService } from './service.js';

export interface EtcdService extends TestService, Etcd {
  env: { ETCD_ENDPOINT: string };
}

/** Starts a single-member etcd on free loopback ports; `stop()` ends it and removes its data. */
export async function startEtcd(): Promise<EtcdService> {
  const etcd = await start();
  return { ...etcd, env: { ETCD_ENDPOINT: etcd.endpoint } };
}
