// AzureBlobLeaseStore against a real Azurite (started by the global setup): the shared conformance
// suite, then what is specific to Azure: container creation, auth and network failures, the
// 15–60 s lease range, the elector end to end, and Azurite's "renew anyone's expired lease" quirk.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BlobServiceClient,
  ContainerClient,
  ContainerSASPermissions,
  generateBlobSASQueryParameters,
  RestError,
  StorageSharedKeyCredential,
} from '@azure/storage-blob';
import { Elector, type ElectorLogger } from '../../lib/election/elector.js';
import { LeaseLostError } from '../../lib/shared/errors.js';
import { leaseStoreConformance } from '../../lib/store.js';
import {
  type AzureAuthKind,
  AzureBlobLeaseStore,
  classifyAzureError,
} from '../../lib/stores/azure/azure-blob.store.js';
import type { Lease, LeaseStore } from '../../lib/stores/lease-store.js';
import { AZURITE_ACCOUNT, AZURITE_ACCOUNT_KEY, freePort, startAzurite } from '../setup/azurite.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { describeBlackHoleStopConformance } from './black-hole.conformance.js';
import { stateContinuesAfterUpgrade, stateWrittenBeforeUpgrade } from './store-spec-helpers.js';

const LEASE_MS = 15_000;

function connectionString(): string {
  const value = process.env.AZURITE_CONNECTION_STRING;
  if (!value)
    throw new Error(
      'AZURITE_CONNECTION_STRING is not set: run the tests through `npm test` (its global setup starts Azurite)',
    );
  return value;
}

function blobEndpoint(): string {
  return `http://127.0.0.1:${process.env.AZURITE_BLOB_PORT}/${AZURITE_ACCOUNT}`;
}

function uniqueContainer(): string {
  return `le-${randomBytes(8).toString('hex')}`;
}

function uniqueElection(tag: string): string {
  return `azure-${tag}-${randomBytes(4).toString('hex')}`;
}

const signal = (ms = 10_000) => AbortSignal.timeout(ms);

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function rejectionOf(promise: Promise<unknown>): Promise<Error & { kind?: string }> {
  return promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: Error & { kind?: string }) => error,
  );
}

async function acquireOk(store: LeaseStore, election: string, identity: string): Promise<Lease> {
  const result = await store.acquire({ election, identity, leaseDurationMs: LEASE_MS, signal: signal() });
  if (!result.acquired) throw new Error(`expected ${identity} to acquire ${election}: ${JSON.stringify(result)}`);
  return result.lease;
}

const conformanceContainer = uniqueContainer();
const conformanceCases = leaseStoreConformance({
  leaseDurationMs: LEASE_MS,
  // Lease durations are whole seconds; the service may free an expired lease up to a second late.
  expiryGranularityMs: 1_000,
  leaderState: true,
  // No push: Azure has no watch, followers poll.
  handover: true,
  records: true,
  createStore: () => new AzureBlobLeaseStore({ connectionString: connectionString(), container: conformanceContainer }),
  createStoreInFreshNamespace: () =>
    new AzureBlobLeaseStore({ connectionString: connectionString(), container: uniqueContainer() }),
  createReplyLosingStore: async () => {
    const proxy = await FaultProxy.start(Number(process.env.AZURITE_BLOB_PORT));
    const viaProxy = `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_ACCOUNT_KEY};BlobEndpoint=http://127.0.0.1:${proxy.port}/${AZURITE_ACCOUNT};`;
    return {
      store: new AzureBlobLeaseStore({ connectionString: viaProxy, container: conformanceContainer }),
      loseNextAcquireReply: (_identity, how) =>
        proxy.set({ kind: 'lose-reply', op: 'lease:acquire', silent: how === 'silence' }),
      // The only upload to a leased blob is a leader-state write.
      loseNextReplyContaining: (_marker, how) =>
        proxy.set({ kind: 'lose-reply', op: 'upload', silent: how === 'silence' }),
      get repliesLost() {
        return proxy.repliesLost;
      },
      close: () => proxy.close(),
    };
  },
  createBlackHoledStore: async () => {
    const proxy = await FaultProxy.start(Number(process.env.AZURITE_BLOB_PORT));
    const viaProxy = `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_ACCOUNT_KEY};BlobEndpoint=http://127.0.0.1:${proxy.port}/${AZURITE_ACCOUNT};`;
    const store = new AzureBlobLeaseStore({ connectionString: viaProxy, container: uniqueContainer() });
    return {
      store,
      blackHole: () => proxy.set({ kind: 'blackhole' }),
      close: async () => {
        proxy.set({ kind: 'pass' });
        await store.close();
        await proxy.close();
      },
    };
  },
});

describe('LeaseStore conformance: AzureBlobLeaseStore on Azurite', () => {
  for (const c of conformanceCases)
    (c.skip ? test.skip : c.concurrent ? test.concurrent : test)(c.name, c.run, c.timeoutMs);
});

describeBlackHoleStopConformance('AzureBlobLeaseStore on Azurite', () => ({
  leaseDurationMs: LEASE_MS,
  createBlackHoledStore: async () => {
    const proxy = await FaultProxy.start(Number(process.env.AZURITE_BLOB_PORT));
    const viaProxy = `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_ACCOUNT_KEY};BlobEndpoint=http://127.0.0.1:${proxy.port}/${AZURITE_ACCOUNT};`;
    const store = new AzureBlobLeaseStore({ connectionString: viaProxy, container: uniqueContainer() });
    return {
      store,
      blackHole: () => proxy.set({ kind: 'blackhole' }),
      close: async () => {
        proxy.set({ kind: 'pass' });
        await store.close();
        await proxy.close();
      },
    };
  },
}));

// Shared by the Azure-specific tests below (the conformance suite uses its own container).
const container = uniqueContainer();
const store = () => new AzureBlobLeaseStore({ connectionString: connectionString(), container });

/** A container nobody made yet, seen raw through the SDK, and a store of it under `blobPrefix`. */
function freshContainer(blobPrefix: string) {
  const fresh = uniqueContainer();
  const prefixed = () =>
    new AzureBlobLeaseStore({ connectionString: connectionString(), container: fresh, blobPrefix });
  return { fresh, raw: new ContainerClient(connectionString(), fresh), prefixed };
}

// Two lease expiries in a row take over 30 s: start that scenario before anything else in this file
// so it overlaps the rest (a top-level beforeAll runs before the first describe), and report its
// outcome in its own test at the end.
let doubleExpiry: Promise<{ renewal: Error & { kind?: string } }>;
beforeAll(() => {
  doubleExpiry = (async () => {
    const election = uniqueElection('double-expiry');
    const [a, b] = [store(), store()];
    const first = await acquireOk(a, election, 'a');
    // b takes over once the lease of a expires...
    const deadline = performance.now() + 3 * LEASE_MS;
    let second: Lease | undefined;
    while (!second) {
      const result = await b.acquire({ election, identity: 'b', leaseDurationMs: LEASE_MS, signal: signal() });
      if (result.acquired) second = result.lease;
      else if (performance.now() > deadline) throw new Error('the expired lease was never freed');
      else await sleep(1_000);
    }
    // ...and crashes: its lease expires too. Azurite would now renew b's lease for anyone.
    await sleep(LEASE_MS + 2_000);
    const renewal = await rejectionOf(a.renew(first, { leaseDurationMs: LEASE_MS, signal: signal() }));
    await b.release(second, { signal: signal() });
    return { renewal };
  })();
  doubleExpiry.catch(() => undefined); // awaited (and reported) by its test
});

describe('AzureBlobLeaseStore on Azurite', () => {
  test.concurrent('creates a missing container and its blob on first acquire, with term and holder metadata', async () => {
    const fresh = uniqueContainer();
    const election = uniqueElection('create');
    const raw = new ContainerClient(connectionString(), fresh);
    expect(await raw.exists()).toBe(false);

    const lease = await acquireOk(
      new AzureBlobLeaseStore({ connectionString: connectionString(), container: fresh }),
      election,
      'creator',
    );
    expect(lease.term).toBe(1);
    expect(await raw.exists()).toBe(true);
    const properties = await raw.getBlobClient(election).getProperties();
    expect(properties.metadata).toMatchObject({ term: '1', holder: 'creator' });
    expect(properties.leaseState).toBe('leased');
  });

  test.concurrent('leader state is the blob content; writes keep the term and holder metadata', async () => {
    const election = uniqueElection('state-metadata');
    const [a, b] = [store(), store()];
    const raw = new ContainerClient(connectionString(), container).getBlockBlobClient(election);
    const first = await acquireOk(a, election, 'holder ü');
    // The blob as the version before leader state left it: empty content, term and holder metadata.
    expect((await raw.downloadToBuffer()).length).toBe(0);
    expect(await a.readState(election, { signal: signal() })).toBeUndefined();

    await a.writeState(first, { cursor: 1 }, { signal: signal() });
    await a.writeState(first, { tick: 't1' }, { key: 'tick:job', signal: signal() });
    expect(JSON.parse((await raw.downloadToBuffer()).toString())).toEqual({
      state: { value: { cursor: 1 }, term: first.term },
      'tick:job': { value: { tick: 't1' }, term: first.term },
    });
    expect(await b.read(election, { signal: signal() })).toEqual({ held: true, holder: 'holder ü', term: first.term });
    await a.release(first, { signal: signal() });
    // The term survived the content writes: the next acquisition counts on from it.
    const second = await acquireOk(b, election, 'b');
    expect(second.term).toBe(first.term + 1);
    expect(await b.readState(election, { signal: signal() })).toEqual({ value: { cursor: 1 }, term: first.term });
    await b.release(second, { signal: signal() });
  });

  test.concurrent('one leader writing several keys at once loses none (a changed etag is read again)', async () => {
    const election = uniqueElection('state-concurrent');
    const a = store();
    const lease = await acquireOk(a, election, 'a');
    const keys = Array.from({ length: 6 }, (_, i) => `tick:job-${i}`);
    await Promise.all(keys.map((key, i) => a.writeState(lease, i, { key, signal: signal() })));
    for (const [i, key] of keys.entries()) {
      expect(await a.readState(election, { key, signal: signal() })).toEqual({ value: i, term: lease.term });
    }
    await a.release(lease, { signal: signal() });
  });

  test.concurrent('a blob whose content is not a state map is reported, never overwritten', async () => {
    const election = uniqueElection('state-corrupt');
    const a = store();
    const lease = await acquireOk(a, election, 'a');
    const raw = new ContainerClient(connectionString(), container).getBlockBlobClient(election);
    const properties = await raw.getProperties();
    await raw.upload('not json', 8, { conditions: { leaseId: lease.leaseId }, metadata: properties.metadata });
    await expect(a.readState(election, { signal: signal() })).rejects.toMatchObject({ kind: 'fatal' });
    await expect(a.writeState(lease, 1, { signal: signal() })).rejects.toMatchObject({ kind: 'fatal' });
    expect((await raw.downloadToBuffer()).toString()).toBe('not json');
    await a.release(lease, { signal: signal() });
  });

  test.concurrent('a wrong account key is fatal, names what to fix and quotes neither key nor connection string', async () => {
    const wrongKey = randomBytes(64).toString('base64');
    const badConnectionString = connectionString().replace(AZURITE_ACCOUNT_KEY, wrongKey);
    expect(badConnectionString).toContain(wrongKey);
    const bad = new AzureBlobLeaseStore({ connectionString: badConnectionString, container });

    const election = uniqueElection('bad-key');
    const failures = [
      await rejectionOf(bad.acquire({ election, identity: 'x', leaseDurationMs: LEASE_MS, signal: signal() })),
      await rejectionOf(bad.read(election, { signal: signal() })),
      await rejectionOf(
        bad.renew(
          { election, holder: 'x', leaseId: randomUUID(), term: 1 },
          { leaseDurationMs: LEASE_MS, signal: signal() },
        ),
      ),
    ];
    for (const error of failures) {
      expect(error.kind).toBe('fatal');
      expect(error.message).toMatch(/403/);
      expect(error.message).toMatch(/account key/i);
      expect(error.message).not.toContain(wrongKey);
      expect(error.message).not.toContain(AZURITE_ACCOUNT_KEY);
      expect(error.message).not.toMatch(/AccountKey=/);
      expect(JSON.stringify(error.cause)).not.toContain(wrongKey);
    }
  });

  test.concurrent('a SAS URL works when it grants enough, and is fatal without quoting the SAS when it does not', async () => {
    const sasContainer = uniqueContainer();
    const credential = new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_ACCOUNT_KEY);
    const raw = new ContainerClient(`${blobEndpoint()}/${sasContainer}`, credential);
    await raw.create();
    const sasFor = (permissions: string) =>
      generateBlobSASQueryParameters(
        {
          containerName: sasContainer,
          permissions: ContainerSASPermissions.parse(permissions),
          startsOn: new Date(Date.now() - 60_000),
          expiresOn: new Date(Date.now() + 3_600_000),
        },
        credential,
      ).toString();

    const election = uniqueElection('sas');
    const writer = new AzureBlobLeaseStore({ url: `${raw.url}?${sasFor('racw')}` });
    const lease = await acquireOk(writer, election, 'sas-writer');
    expect(await writer.read(election, { signal: signal() })).toEqual({
      held: true,
      holder: 'sas-writer',
      term: lease.term,
    });
    await writer.release(lease, { signal: signal() });

    const readOnlySas = sasFor('r');
    const reader = new AzureBlobLeaseStore({ url: `${raw.url}?${readOnlySas}` });
    const error = await rejectionOf(
      reader.acquire({ election, identity: 'sas-reader', leaseDurationMs: LEASE_MS, signal: signal() }),
    );
    expect(error.kind).toBe('fatal');
    expect(error.message).toMatch(/SAS/);
    const sig = new URLSearchParams(readOnlySas).get('sig') as string;
    expect(error.message).not.toContain(sig);
    expect(error.message).not.toContain(encodeURIComponent(sig));
    expect(error.message).not.toMatch(/sig=/);
  });

  test.concurrent('an account URL with a StorageSharedKeyCredential and a container works', async () => {
    const accountUrlStore = new AzureBlobLeaseStore({
      url: blobEndpoint(),
      credential: new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_ACCOUNT_KEY),
      container,
    });
    expect(accountUrlStore.container).toBe(container);
    const election = uniqueElection('account-url');
    const lease = await acquireOk(accountUrlStore, election, 'by-url');
    expect((await store().read(election, { signal: signal() })).holder).toBe('by-url');
    await accountUrlStore.release(lease, { signal: signal() });
  });

  test.concurrent('a ContainerClient passed in is used, and close() leaves it usable', async () => {
    const client = BlobServiceClient.fromConnectionString(connectionString()).getContainerClient(container);
    const own = new AzureBlobLeaseStore({ containerClient: client, blobPrefix: 'tenant-a/' });
    const election = uniqueElection('own-client');
    const lease = await acquireOk(own, election, 'own');
    await own.close();
    await own.close();
    expect((await client.getBlobClient(`tenant-a/${election}`).getProperties()).leaseState).toBe('leased');
    await own.release(lease, { signal: signal() });
  });

  test.concurrent('an unreachable endpoint is transient and fails at once: no SDK retries', async () => {
    const port = await freePort();
    const unreachable = new AzureBlobLeaseStore({
      connectionString: connectionString().replace(/127\.0\.0\.1:\d+/, `127.0.0.1:${port}`),
      container,
    });
    const startedAt = performance.now();
    const error = await rejectionOf(
      unreachable.acquire({
        election: uniqueElection('down'),
        identity: 'x',
        leaseDurationMs: LEASE_MS,
        signal: signal(20_000),
      }),
    );
    // The SDK's default policy would retry for about 16 s; one try fails in milliseconds.
    expect(performance.now() - startedAt).toBeLessThan(5_000);
    expect(error.kind).toBe('transient');
    expect(error.message).toMatch(/ECONNREFUSED|REQUEST_SEND_ERROR/);
  });

  test.concurrent('a server that never answers is cut off by the signal', async () => {
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket); // accept, then say nothing
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const silent = new AzureBlobLeaseStore({
        connectionString: connectionString().replace(/127\.0\.0\.1:\d+/, `127.0.0.1:${port}`),
        container,
      });
      const startedAt = performance.now();
      const error = await rejectionOf(
        silent.acquire({
          election: uniqueElection('silent'),
          identity: 'x',
          leaseDurationMs: LEASE_MS,
          signal: signal(1_000),
        }),
      );
      expect(error.kind).toBe('transient');
      expect(performance.now() - startedAt).toBeLessThan(5_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test.concurrent('the Elector refuses lease durations outside 15–60 s, naming leaseDurationMs', async () => {
    const azure = store();
    for (const leaseDurationMs of [10_000, 61_000]) {
      const create = () => new Elector({ store: azure, election: 'range', leaseDurationMs });
      expect(create).toThrow(RangeError);
      expect(create).toThrow(/leaseDurationMs/);
      expect(create).toThrow(/15 s–60 s/);
    }
    expect(() => new Elector({ store: azure, election: 'range', leaseDurationMs: 15_500 })).toThrow(/multiple of 1000/);
  });

  test.concurrent('store options are validated with messages that name the option and quote no secret', async () => {
    const secret = connectionString();
    expect(() => new AzureBlobLeaseStore({})).toThrow(/exactly one of connectionString, url or containerClient/);
    expect(() => new AzureBlobLeaseStore({ connectionString: secret, url: blobEndpoint() })).toThrow(
      /connectionString and url/,
    );
    expect(() => new AzureBlobLeaseStore({ connectionString: secret, container: 'Bad_Name' })).toThrow(
      /container must be/,
    );
    expect(() => new AzureBlobLeaseStore({ connectionString: undefined as unknown as string, url: undefined })).toThrow(
      /exactly one/,
    );
    expect(() => new AzureBlobLeaseStore({ connectionString: '' })).toThrow(
      /connectionString must be a non-empty string/,
    );
    for (const every of [0, 21, 2.5, Number.NaN]) {
      expect(() => new AzureBlobLeaseStore({ connectionString: secret, readEveryNthRenewal: every })).toThrow(
        /readEveryNthRenewal must be an integer from 1 to 20/,
      );
    }
    expect(new AzureBlobLeaseStore({ connectionString: secret }).readEveryNthRenewal).toBe(4);
    expect(new AzureBlobLeaseStore({ connectionString: secret, readEveryNthRenewal: 1 }).readEveryNthRenewal).toBe(1);

    const garbage = 'AccountName=x;AccountKey=not-really-a-key;Nonsense';
    expect(() => new AzureBlobLeaseStore({ connectionString: garbage })).toThrow(/connectionString is not a valid/);
    expect(() => new AzureBlobLeaseStore({ connectionString: garbage })).not.toThrow(/not-really-a-key/);

    const sasUrl = 'ftp://example.com/container?sig=SECRETSIG';
    expect(() => new AzureBlobLeaseStore({ url: sasUrl })).toThrow(/url must be an http\(s\) URL/);
    expect(() => new AzureBlobLeaseStore({ url: sasUrl })).not.toThrow(/SECRETSIG/);
    expect(() => new AzureBlobLeaseStore({ url: `${blobEndpoint()}/one`, container: 'two' })).toThrow(
      /names container "one"/,
    );
    expect(
      () =>
        new AzureBlobLeaseStore({
          connectionString: secret,
          credential: new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_ACCOUNT_KEY),
        }),
    ).toThrow(/credential is only used with url/);
  });

  test.concurrent('a follower polling a held lease sends one request per poll, and acquires a free one', async () => {
    const proxy = await FaultProxy.start(Number(process.env.AZURITE_BLOB_PORT));
    const viaProxy = `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_ACCOUNT_KEY};BlobEndpoint=http://127.0.0.1:${proxy.port}/${AZURITE_ACCOUNT};`;
    const follower = new AzureBlobLeaseStore({ connectionString: viaProxy, container });
    const election = uniqueElection('one-read');
    try {
      const leader = store();
      const lease = await acquireOk(leader, election, 'leader');
      const from = Date.now(); // the proxy logs epoch ms
      for (let poll = 0; poll < 5; poll++) {
        const result = await follower.acquire({ election, identity: 'f', leaseDurationMs: LEASE_MS, signal: signal() });
        expect(result).toEqual({ acquired: false, holder: 'leader', term: lease.term });
      }
      // One properties read per poll, nothing else: no acquire sent to be refused.
      expect(proxy.counts(from)).toEqual({ read: 5 });

      await leader.release(lease, { signal: signal() });
      const won = await acquireOk(follower, election, 'f');
      expect(won.term).toBe(lease.term + 1);
    } finally {
      await proxy.close();
    }
  });

  test.concurrent('handover keeps a poll at one request: a held lease with meta, a reserved lease, an unchanged renew', async () => {
    const proxy = await FaultProxy.start(Number(process.env.AZURITE_BLOB_PORT));
    const viaProxy = `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_ACCOUNT_KEY};BlobEndpoint=http://127.0.0.1:${proxy.port}/${AZURITE_ACCOUNT};`;
    const [leader, follower] = [0, 1].map(() => new AzureBlobLeaseStore({ connectionString: viaProxy, container }));
    const election = uniqueElection('handover-cost');
    const poll = () => follower?.acquire({ election, identity: 'f', leaseDurationMs: LEASE_MS, signal: signal() });
    try {
      const meta = { advertise: 'http://10.0.0.7:3000', leaderships: 1 };
      const taken = await leader?.acquire({
        election,
        identity: 'leader',
        leaseDurationMs: LEASE_MS,
        signal: signal(),
        meta,
      });
      if (!taken?.acquired) throw new Error('not acquired');
      const { lease } = taken;

      let from = Date.now();
      for (let i = 0; i < 3; i++) {
        expect(await poll()).toEqual({ acquired: false, holder: 'leader', term: lease.term, meta });
      }
      expect(proxy.counts(from)).toEqual({ read: 3 });

      // Renewals with the meta the lease already carries: one renew request each, no metadata write.
      from = Date.now();
      for (let i = 0; i < 3; i++) {
        await leader?.renew(lease, { leaseDurationMs: LEASE_MS, signal: signal(), meta: { ...meta } });
      }
      expect(proxy.counts(from)).toEqual({ 'lease:renew': 3 });
      // A changed meta: one metadata write beside the renew, from what the lease last wrote (no read).
      from = Date.now();
      await leader?.renew(lease, { leaseDurationMs: LEASE_MS, signal: signal(), meta: { ...meta, leaderships: 2 } });
      expect(proxy.counts(from)).toEqual({ 'lease:renew': 1, metadata: 1 });

      // A reserving release: one metadata write and the release, no read.
      from = Date.now();
      await leader?.release(lease, { signal: signal(), handoverTo: 'heir', reserveMs: 30_000 });
      expect(proxy.counts(from)).toEqual({ metadata: 1, 'lease:release': 1 });

      // Another identity polling the reserved lease: refused from the properties read, no acquire sent.
      from = Date.now();
      for (let i = 0; i < 3; i++) {
        const refused = await poll();
        expect(refused).toMatchObject({ acquired: false, term: lease.term, reservedFor: 'heir' });
        expect(refused).not.toHaveProperty('holder');
      }
      expect(proxy.counts(from)).toEqual({ read: 3 });
      const heir = await acquireOk(store(), election, 'heir');
      expect(heir.term).toBe(lease.term + 1);
      await store().release(heir, { signal: signal() });
    } finally {
      await proxy.close();
    }
  });

  test.concurrent('meta and reservation are ASCII metadata; blobs of the previous version keep working beside it', async () => {
    const election = uniqueElection('upgrade');
    const raw = new ContainerClient(connectionString(), container).getBlockBlobClient(election);
    const [a, b] = [store(), store()];
    // A blob as the previous version leaves it: held, term and holder only.
    await new ContainerClient(connectionString(), container).createIfNotExists();
    await raw.upload('', 0);
    const oldLease = raw.getBlobLeaseClient(randomUUID());
    await oldLease.acquireLease(LEASE_MS / 1000);
    await raw.setMetadata({ term: '7', holder: 'old%20one' }, { conditions: { leaseId: oldLease.leaseId } });
    expect(await b.read(election, { signal: signal() })).toEqual({ held: true, holder: 'old one', term: 7 });
    expect(await b.acquire({ election, identity: 'b', leaseDurationMs: LEASE_MS, signal: signal() })).toEqual({
      acquired: false,
      holder: 'old one',
      term: 7,
    });
    await oldLease.releaseLease();

    const meta = { advertise: 'http://höst:3000/"x"' };
    const lease = await a.acquire({ election, identity: 'a ü', leaseDurationMs: LEASE_MS, signal: signal(), meta });
    if (!lease.acquired) throw new Error('not acquired');
    await a.release(lease.lease, { signal: signal(), handoverTo: 'heir ü', reserveMs: 30_000 });
    const metadata = (await raw.getProperties()).metadata ?? {};
    expect(metadata).toEqual({
      term: '8',
      holder: 'a%20%C3%BC',
      meta: Buffer.from(JSON.stringify(meta)).toString('base64url'),
      metaterm: '8',
      reservedfor: 'heir%20%C3%BC',
      reservedms: '30000',
      reservedterm: '8',
    });
    expect(Object.values(metadata).join('')).toMatch(/^[\x21-\x7e]*$/);
    expect(await b.read(election, { signal: signal() })).toEqual({ held: false, term: 8, reservedFor: 'heir ü' });

    // A previous-version replica ignores the reservation: its acquire re-sends the keys it does not
    // know with a bumped term. Not a safety break (one holder at a time still), and the keys of the
    // older term are then stale: neither its meta nor its reservation is reported again.
    const old = raw.getBlobLeaseClient(randomUUID());
    await old.acquireLease(LEASE_MS / 1000);
    await raw.setMetadata({ ...metadata, term: '9', holder: 'old' }, { conditions: { leaseId: old.leaseId } });
    expect(await b.read(election, { signal: signal() })).toEqual({ held: true, holder: 'old', term: 9 });
    await old.releaseLease();
    expect(await b.read(election, { signal: signal() })).toEqual({ held: false, term: 9 });
    const next = await acquireOk(b, election, 'b');
    expect(next.term).toBe(10);
    expect((await raw.getProperties()).metadata).toEqual({ term: '10', holder: 'b' });
    await b.release(next, { signal: signal() });
  });

  test.concurrent('leader state (the blob content) survives a previous-version replica acquiring, renewing, re-sending its metadata and releasing', async () => {
    const election = uniqueElection('upgrade-state');
    const raw = new ContainerClient(connectionString(), container).getBlockBlobClient(election);
    const [a, b] = [store(), store()];
    const first = await acquireOk(a, election, 'a');
    const { read: written, expected: before } = await stateWrittenBeforeUpgrade(a, b, first);
    // The previous version's acquire (a lease, then its metadata with a bumped term), renew and
    // release: lease and metadata operations, none of which writes the blob's content.
    const old = raw.getBlobLeaseClient(randomUUID());
    await old.acquireLease(LEASE_MS / 1000);
    const metadata = (await raw.getProperties()).metadata ?? {};
    await raw.setMetadata(
      { ...metadata, term: String(first.term + 1), holder: 'old' },
      { conditions: { leaseId: old.leaseId } },
    );
    await old.renewLease();
    expect(await b.read(election, { signal: signal() })).toEqual({ held: true, holder: 'old', term: first.term + 1 });
    expect(await written()).toEqual(before);
    await old.releaseLease();
    expect(await written()).toEqual(before);
    const next = await acquireOk(b, election, 'b');
    await stateContinuesAfterUpgrade(b, a, next);
  });

  test.concurrent('handover requests live in a side blob beside the lease blob; listElections leaves side blobs and other prefixes out', async () => {
    const { fresh, raw, prefixed } = freshContainer('tenant/');
    const tenant = prefixed();
    const root = new AzureBlobLeaseStore({ connectionString: connectionString(), container: fresh });
    const request = {
      election: 'jobs',
      id: randomUUID(),
      term: 1,
      requestedBy: 'cli:op@host',
      reason: 'operator',
      requestedAt: Date.now(),
    };
    expect(await tenant.listElections({ signal: signal() })).toEqual([]);
    expect(await tenant.readHandover('jobs', { signal: signal() })).toBeUndefined();
    // Made in a container that does not exist yet: the request creates it.
    await tenant.requestHandover(request, { signal: signal() });
    expect(JSON.parse((await raw.getBlockBlobClient('tenant/jobs~handover').downloadToBuffer()).toString())).toEqual(
      request,
    );
    await acquireOk(tenant, 'billing', 't');
    await acquireOk(root, 'a.handover', 'r');
    expect(await tenant.listElections({ signal: signal() })).toEqual(['billing', 'jobs']);
    expect(await root.listElections({ signal: signal() })).toEqual(['a.handover']);
    // A request replaced after it was read is kept by a clear of the one read.
    await tenant.clearHandover('jobs', 'another-id', { signal: signal() });
    expect(await tenant.readHandover('jobs', { signal: signal() })).toEqual(request);
    await tenant.clearHandover('jobs', request.id, { signal: signal() });
    expect(await raw.getBlockBlobClient('tenant/jobs~handover').exists()).toBe(false);
  });

  test.concurrent('a shared record is one blob beside the lease blob, its ETag the version; the lease blob and listElections never see it', async () => {
    const { raw, prefixed } = freshContainer('tenant/');
    const [tenant, other] = [prefixed(), prefixed()];
    const write = (value: unknown, ifVersion: string | null, key = 'job:x') =>
      tenant.writeRecord('jobs', key, value, { ifVersion, signal: signal() });
    // No container yet: nothing to read, nothing a replace could match, and a create makes the container.
    expect(await tenant.readRecord('jobs', 'job:x', { signal: signal() })).toBeUndefined();
    expect(await write('replace', '"0x8D0000000000000"')).toBe(false);
    expect(await raw.exists()).toBe(false);
    expect(await write({ paused: true }, null)).toBe(true);
    const blob = raw.getBlockBlobClient('tenant/jobs~records/job:x');
    const properties = await blob.getProperties();
    expect(JSON.parse((await blob.downloadToBuffer()).toString())).toEqual({ paused: true });
    expect(properties.contentType).toBe('application/json');
    expect(await other.readRecord('jobs', 'job:x', { signal: signal() })).toEqual({
      value: { paused: true },
      version: properties.etag,
    });
    // No lease blob was made: the election was never led, nor listed.
    expect(await raw.getBlockBlobClient('tenant/jobs').exists()).toBe(false);
    expect(await tenant.read('jobs', { signal: signal() })).toEqual({ held: false, term: 0 });
    expect(await tenant.listElections({ signal: signal() })).toEqual([]);
    // Held by another replica: the lease blob's ETag and metadata stay as the holder left them.
    const lease = await acquireOk(other, 'jobs', 'holder');
    const leased = await raw.getBlockBlobClient('tenant/jobs').getProperties();
    expect(await write({ paused: false }, properties.etag ?? null)).toBe(true);
    const after = await raw.getBlockBlobClient('tenant/jobs').getProperties();
    expect({ etag: after.etag, metadata: after.metadata, lease: after.leaseState }).toEqual({
      etag: leased.etag,
      metadata: leased.metadata,
      lease: 'leased',
    });
    expect(await tenant.listElections({ signal: signal() })).toEqual(['jobs']);
    // A version that is no ETag matches nothing: refused, whatever the service would say of it.
    expect(await write('x', 'not an etag "')).toBe(false);
    // A record blob deleted by hand: a replace finds nothing to match, a create works again.
    const current = await other.readRecord('jobs', 'job:x', { signal: signal() });
    await blob.delete();
    expect(await write('gone', current?.version ?? null)).toBe(false);
    expect(await write('again', null)).toBe(true);
    await other.release(lease, { signal: signal() });
  });

  test.concurrent(
    'a lease broken from outside counts as held for one lease from when a follower first saw it broken',
    async () => {
      const election = uniqueElection('broken');
      const leader = store();
      const follower = store();
      const lease = await acquireOk(leader, election, 'leader');
      const sdkContainer = new ContainerClient(connectionString(), container);
      // What an operator's "Break Lease" with break period 0 does: free at once, the holder not told.
      await sdkContainer.getBlobClient(election).getBlobLeaseClient(lease.leaseId).breakLease(0);
      const props = await sdkContainer.getBlobClient(election).getProperties();
      expect(props.leaseState).toBe('broken');

      const firstSeen = performance.now();
      const poll = () => follower.acquire({ election, identity: 'f', leaseDurationMs: LEASE_MS, signal: signal() });
      let won: Lease | undefined;
      let lastRefusedAt = firstSeen;
      while (!won) {
        const sentAt = performance.now();
        const result = await poll();
        if (result.acquired) won = result.lease;
        else {
          expect(result).toEqual({ acquired: false, holder: 'leader', term: lease.term });
          lastRefusedAt = sentAt;
          await sleep(1_000);
        }
        expect(performance.now() - firstSeen).toBeLessThan(LEASE_MS + 10_000);
      }
      const wonAt = performance.now();
      // Refused while the old holder may still act (its deadline is within a lease of its last
      // renewal, hence of the break), taken once a lease has passed since the break was first seen.
      expect(wonAt - firstSeen).toBeGreaterThanOrEqual(LEASE_MS);
      expect(lastRefusedAt - firstSeen).toBeGreaterThan(LEASE_MS - 3_000);
      expect(won.term).toBe(lease.term + 1);
      // The old holder finds out at its next renewal.
      await expect(leader.renew(lease, { leaseDurationMs: LEASE_MS, signal: signal() })).rejects.toBeInstanceOf(
        LeaseLostError,
      );
    },
    LEASE_MS + 20_000,
  );

  test.concurrent('an Elector wins, renews, and a second one takes over after the first stops', async () => {
    const election = uniqueElection('elector');
    const errors: string[] = [];
    const logger: ElectorLogger = { log: () => undefined, warn: (m) => errors.push(m), error: (m) => errors.push(m) };
    const timings = { leaseDurationMs: LEASE_MS, renewIntervalMs: 1_000, retryIntervalMs: 500 };
    const first = new Elector({ store: store(), election, identity: 'first', logger, ...timings });
    const second = new Elector({ store: store(), election, identity: 'second', logger, ...timings });
    try {
      await first.start();
      expect(first.isLeader()).toBe(true);
      const firstTerm = first.term as number;
      const wonAt = first.status().lastRenewAt;
      await waitFor(() => first.status().lastRenewAt !== wonAt, 10_000);
      expect(first.isLeader()).toBe(true);

      await second.start();
      expect(second.isLeader()).toBe(false);
      expect(second.leaderId).toBe('first');

      await first.stop();
      expect(first.isLeader()).toBe(false);
      await waitFor(() => second.isLeader(), 10_000);
      expect(second.term).toBeGreaterThan(firstTerm);
      expect(errors).toEqual([]);
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  });

  test.concurrent('an extra Azurite with on-disk persistence keeps the term across a restart', async () => {
    // The helper chaos tests use to take "the storage service" down and bring it back.
    const location = await mkdtemp(join(tmpdir(), 'azurite-'));
    let azurite = await startAzurite({ location });
    try {
      const election = uniqueElection('restart');
      const onDisk = () => new AzureBlobLeaseStore({ connectionString: azurite.connectionString, container });
      const before = await acquireOk(onDisk(), election, 'before-restart');
      await azurite.stop();
      const down = await rejectionOf(onDisk().read(election, { signal: signal() }));
      expect(down.kind).toBe('transient');

      azurite = await startAzurite({ location, port: azurite.port });
      // Azurite 3.35 forgets lease state on restart (Azure would not); the blob and its term survive.
      expect((await onDisk().read(election, { signal: signal() })).term).toBe(before.term);
      await onDisk().release(before, { signal: signal() });
      const after = await acquireOk(onDisk(), election, 'after-restart');
      expect(after.term).toBeGreaterThan(before.term);
      await onDisk().release(after, { signal: signal() });
    } finally {
      await azurite.stop();
      await rm(location, { recursive: true, force: true });
    }
  });

  test.concurrent(
    'a lease renewed by the service under another lease id is lost, not silently ours (Azurite quirk)',
    async () => {
      const { renewal } = await doubleExpiry;
      expect(renewal).toBeInstanceOf(LeaseLostError);
      // Azurite 3.35 answers this renewal with 200 and b's lease id (Azure answers 409): our check caught it.
      expect(renewal.message).toMatch(/another lease id/);
    },
    3 * LEASE_MS + 30_000,
  );
});

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(50);
  }
}

describe('classifyAzureError', () => {
  // Failures Azurite cannot produce on demand, built as the SDK builds them: a RestError whose
  // details carry the service's x-ms-error-code. The raw message quotes secrets on purpose.
  const secretMessage = 'failed https://acct.blob.core.windows.net/c/b?sv=2024&sig=SECRETSIG AccountKey=SECRETKEY';
  const restError = (statusCode: number | undefined, errorCode?: string, code?: string) =>
    Object.assign(new RestError(secretMessage, { statusCode, code }), errorCode ? { details: { errorCode } } : {});
  const classify = (error: unknown, authKind: AzureAuthKind = 'shared-key') =>
    classifyAzureError(error, { operation: 'renew', election: 'jobs', container: 'leases', authKind });

  test.each([
    ['503 ServerBusy', 'transient', restError(503, 'ServerBusy'), /503 ServerBusy/],
    ['500 InternalError', 'transient', restError(500, 'InternalError'), /500 InternalError/],
    ['429', 'transient', restError(429), /429/],
    ['408 OperationTimedOut', 'transient', restError(408, 'OperationTimedOut'), /408/],
    ['409 ContainerBeingDeleted', 'transient', restError(409, 'ContainerBeingDeleted'), /409 ContainerBeingDeleted/],
    [
      'REQUEST_SEND_ERROR',
      'transient',
      restError(undefined, undefined, 'REQUEST_SEND_ERROR'),
      /no response REQUEST_SEND_ERROR/,
    ],
    ['ECONNRESET', 'transient', Object.assign(new Error('connect ECONNRESET'), { code: 'ECONNRESET' }), /ECONNRESET/],
    ['AbortError', 'transient', Object.assign(new Error('aborted'), { name: 'AbortError' }), /aborted/],
    ['a thrown string', 'transient', 'something odd', /failed/],
    ['409 LeaseAlreadyPresent', 'lost', restError(409, 'LeaseAlreadyPresent'), /no longer ours/],
    [
      '409 LeaseIdMismatchWithLeaseOperation',
      'lost',
      restError(409, 'LeaseIdMismatchWithLeaseOperation'),
      /no longer ours/,
    ],
    [
      '400 InvalidResourceName',
      'fatal',
      restError(400, 'InvalidResourceName'),
      /400 InvalidResourceName.*container name/,
    ],
    [
      '403 KeyBasedAuthenticationNotPermitted',
      'fatal',
      restError(403, 'KeyBasedAuthenticationNotPermitted'),
      /shared key access is disabled/,
    ],
    ['403 AuthorizationSourceIPMismatch', 'fatal', restError(403, 'AuthorizationSourceIPMismatch'), /firewall/],
    ['403 AuthenticationFailed', 'fatal', restError(403, 'AuthenticationFailed'), /account key/],
    ['404 ResourceNotFound', 'fatal', restError(404, 'ResourceNotFound'), /account or endpoint was not found/],
  ] as const)('%s → %s', (_label, kind, error, message) => {
    const classified = classify(error);
    expect(classified.kind).toBe(kind);
    expect(classified.message).toMatch(message);
    expect(classified.message).not.toMatch(/SECRET/);
    expect(JSON.stringify(classified.cause ?? null)).not.toMatch(/SECRET/);
  });

  test('a refused token credential is told to grant Storage Blob Data Contributor on the container', () => {
    const rbac = classify(restError(403, 'AuthorizationPermissionMismatch'), 'token');
    expect(rbac.kind).toBe('fatal');
    expect(rbac.message).toMatch(/renew on container "leases" was refused \(403 AuthorizationPermissionMismatch\)/);
    expect(rbac.message).toMatch(/"Storage Blob Data Contributor" scoped to the container/);
    expect(classify(restError(401, 'InvalidAuthenticationInfo'), 'token').message).toMatch(
      /token credential was rejected/,
    );
    expect(classify(restError(403, 'AuthorizationPermissionMismatch'), 'sas').message).toMatch(/check the SAS/);
  });

  test('@azure/identity failures are fatal when the credential cannot work, transient otherwise', () => {
    const unavailable = Object.assign(new Error('no managed identity endpoint'), {
      name: 'CredentialUnavailableError',
    });
    expect(classify(unavailable, 'token')).toMatchObject({
      kind: 'fatal',
      message: expect.stringMatching(/could not get a token/),
    });
    const badSecret = Object.assign(new Error('AADSTS7000215'), { name: 'AuthenticationError', statusCode: 401 });
    expect(classify(badSecret, 'token').kind).toBe('fatal');
    const entraDown = Object.assign(new Error('bad gateway'), { name: 'AuthenticationError', statusCode: 502 });
    expect(classify(entraDown, 'token').kind).toBe('transient');
  });
});
