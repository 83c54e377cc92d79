// Types only: the SDK itself is imported when a store is built (see loadContainerClient), so an app
// that never builds an AzureBlobLeaseStore does not pay for loading it.
import type { ContainerClient, newPipeline, StoragePipelineOptions } from '@azure/storage-blob';
import { FatalLeaseStoreError } from '../../shared/errors.js';
import { azureMessages } from './azure.messages.js';
import type { AzureAuthKind } from './azure-errors.js';

/**
 * What `url` accepts: a `StorageSharedKeyCredential`, an `AnonymousCredential` or any `TokenCredential`
 * (e.g. `DefaultAzureCredential` from `@azure/identity`). Taken from the SDK so we need not depend
 * on `@azure/core-auth` ourselves.
 */
export type AzureBlobCredential = NonNullable<Parameters<typeof newPipeline>[0]>;

/** Options of `new AzureBlobLeaseStore(...)`: where the lease blobs live and how to authenticate. */
export interface AzureBlobLeaseStoreOptions {
  /**
   * An account connection string (`…;AccountName=…;AccountKey=…`), a SAS connection string
   * (`BlobEndpoint=…;SharedAccessSignature=…`) or `UseDevelopmentStorage=true`.
   * Exactly one of `connectionString`, `url` and `containerClient` is required.
   */
  connectionString?: string;
  /**
   * An account URL (`https://<account>.blob.core.windows.net`) or a container URL
   * (`https://<account>.blob.core.windows.net/<container>`), optionally with a SAS query string.
   * A container URL names the container itself, so `container` must then be omitted (or equal).
   */
  url?: string;
  /** Credential for `url`; omit it for a SAS URL. */
  credential?: AzureBlobCredential;
  /**
   * A client you built yourself (custom pipeline, proxy, retries). Its pipeline's retry policy is
   * yours to bound, but every call we make still passes our AbortSignal, so no call outlives the
   * lease whatever that policy does. {@link AzureBlobLeaseStore.close} never touches it.
   */
  containerClient?: ContainerClient;
  /** Container that holds the lease blobs; created on first acquire when missing. Default `leader-election`. */
  container?: string;
  /** Prepended to the election name to form the blob name, e.g. `my-app/`. Default none. */
  blobPrefix?: string;
  /**
   * The leader reads the handover request and job board blobs (billed GETs) every Nth renewal, 1-20.
   * Default 4: a request or job command reaches it within 4 renew intervals (10 s at the defaults).
   */
  readEveryNthRenewal?: number;
}

/** `options.readEveryNthRenewal`, validated (default 4). */
export function azureReadEvery(options: AzureBlobLeaseStoreOptions): number {
  const every = options.readEveryNthRenewal ?? 4;
  if (!Number.isInteger(every) || every < 1 || every > 20) {
    throw new RangeError(
      azureMessages.optionInvalid('readEveryNthRenewal', `must be an integer from 1 to 20 (got ${String(every)})`),
    );
  }
  return every;
}

const DEFAULT_CONTAINER = 'leader-election';
/** Azure's container naming rules: 3–63 chars, lowercase letters/digits, single inner hyphens. */
const CONTAINER_PATTERN = /^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){2,62}$/;

/**
 * The SDK retries up to 4 times with exponential back-off (about 16 s in all) by default, longer
 * than a renew deadline. The elector retries on its own schedule, so one try per call is right.
 */
const PIPELINE_OPTIONS: StoragePipelineOptions = { retryOptions: { maxTries: 1 } };

type Sdk = typeof import('@azure/storage-blob');

let loading: Promise<Sdk> | undefined;

/**
 * One import per process, whatever the number of stores (a failed one is tried again). The
 * CommonJS build's import() gets the SDK's ESM build, whose declarations differ from the CommonJS
 * ones `Sdk` names there only by private fields: the same classes to us.
 */
function importSdk(): Promise<Sdk> {
  if (!loading) {
    loading = (import('@azure/storage-blob') as Promise<unknown> as Promise<Sdk>).catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
  }
  return loading;
}

/** What the options describe, validated without the SDK; `connect` builds the client once it is loaded. */
export interface AzureClientPlan {
  container: string;
  authKind: AzureAuthKind;
  blobPrefix: string;
  connect(sdk: Sdk): ContainerClient;
}

/**
 * The container client `plan` describes, the SDK imported on first use. A client the SDK refuses
 * (a connection string our own check let through) is a configuration error, fatal.
 */
export async function loadContainerClient(plan: AzureClientPlan): Promise<ContainerClient> {
  const sdk = await importSdk();
  try {
    return plan.connect(sdk);
  } catch {
    // No cause attached: the SDK's error may quote parts of the string.
    throw new FatalLeaseStoreError(azureMessages.connectionStringInvalid);
  }
}

/** The container client the options describe, and how its requests authenticate; validates them all. */
export function azureContainerClient(options: AzureBlobLeaseStoreOptions): AzureClientPlan {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(azureMessages.optionsExclusive([]));
  }
  const { connectionString, url, credential, containerClient, container, blobPrefix = '' } = options;
  const given = (['connectionString', 'url', 'containerClient'] as const).filter((key) => options[key] !== undefined);
  if (given.length !== 1) throw new TypeError(azureMessages.optionsExclusive(given));
  if (typeof blobPrefix !== 'string' || blobPrefix.length > 512) {
    throw new TypeError(azureMessages.optionInvalid('blobPrefix', 'must be a string of at most 512 characters'));
  }
  if (credential !== undefined && url === undefined) {
    throw new TypeError(azureMessages.optionInvalid('credential', 'is only used with url'));
  }
  if (container !== undefined && (typeof container !== 'string' || !CONTAINER_PATTERN.test(container))) {
    throw new TypeError(azureMessages.containerName(container));
  }

  if (containerClient !== undefined) {
    if (typeof containerClient?.getBlockBlobClient !== 'function') {
      throw new TypeError(
        azureMessages.optionInvalid('containerClient', 'must be a ContainerClient from @azure/storage-blob'),
      );
    }
    if (container !== undefined && container !== containerClient.containerName) {
      throw new TypeError(azureMessages.containerConflict(containerClient.containerName, container));
    }
    return {
      container: containerClient.containerName,
      authKind: authKindOf(containerClient.credential, containerClient.url, 'unknown'),
      blobPrefix,
      connect: () => containerClient,
    };
  }
  if (connectionString !== undefined) {
    if (typeof connectionString !== 'string' || connectionString.trim() === '') {
      throw new TypeError(
        azureMessages.optionInvalid(
          'connectionString',
          'must be a non-empty string (is the environment variable set?)',
        ),
      );
    }
    // No cause attached to the error: nothing of the string is quoted.
    if (!isConnectionString(connectionString)) throw new TypeError(azureMessages.connectionStringInvalid);
    const authKind = /(^|;)\s*SharedAccessSignature=/i.test(connectionString) ? 'sas' : 'shared-key';
    const name = container ?? DEFAULT_CONTAINER;
    return {
      container: name,
      authKind,
      blobPrefix,
      connect: (sdk) => new sdk.ContainerClient(connectionString, name, PIPELINE_OPTIONS),
    };
  }
  return { ...clientFromUrl(url, credential, container), blobPrefix };
}

/**
 * The SDK's own rules for a connection string (`extractConnectionStringParts`), checked without
 * loading it: the development shortcut; an account key string (a name, a base64 key, and either a
 * blob endpoint or a protocol and an endpoint suffix); or a blob endpoint with a SAS. The endpoint
 * must be an http(s) URL.
 */
function isConnectionString(value: string): boolean {
  if (value.startsWith('UseDevelopmentStorage=true')) return true;
  const part = (name: string) => {
    const found = value
      .split(';')
      .map((piece) => piece.trim())
      .find((piece) => piece.startsWith(`${name}=`));
    return found?.slice(name.length + 1) ?? '';
  };
  let endpoint = part('BlobEndpoint').replace(/\/$/, '');
  if (/DefaultEndpointsProtocol=|AccountKey=/.test(value)) {
    const account = part('AccountName');
    if (!account || Buffer.from(part('AccountKey'), 'base64').length === 0) return false;
    if (!endpoint) {
      const protocol = part('DefaultEndpointsProtocol').toLowerCase();
      const suffix = part('EndpointSuffix');
      if ((protocol !== 'https' && protocol !== 'http') || !suffix) return false;
      endpoint = `${protocol}://${account}.blob.${suffix}`;
    }
  } else if (!endpoint || !part('SharedAccessSignature')) {
    return false;
  }
  try {
    const { protocol } = new URL(endpoint);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}

function clientFromUrl(
  url: unknown,
  credential: AzureBlobCredential | undefined,
  container: string | undefined,
): Omit<AzureClientPlan, 'blobPrefix'> {
  let parsed: URL | undefined;
  try {
    parsed = typeof url === 'string' ? new URL(url) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    // Not echoed: it may carry a SAS.
    throw new TypeError(azureMessages.optionInvalid('url', 'must be an http(s) URL of a storage account or container'));
  }
  if (
    credential !== undefined &&
    typeof (credential as { getToken?: unknown }).getToken !== 'function' &&
    typeof (credential as { create?: unknown }).create !== 'function'
  ) {
    throw new TypeError(
      azureMessages.optionInvalid(
        'credential',
        'must be a TokenCredential (e.g. DefaultAzureCredential) or a StorageSharedKeyCredential',
      ),
    );
  }
  const href = parsed.href;
  const authKind = authKindOf(credential, href, 'anonymous');
  const named = containerInUrl(parsed);
  if (named === undefined) {
    const name = container ?? DEFAULT_CONTAINER;
    return {
      container: name,
      authKind,
      connect: (sdk) => new sdk.BlobServiceClient(href, credential, PIPELINE_OPTIONS).getContainerClient(name),
    };
  }
  if (container !== undefined && container !== named) {
    throw new TypeError(azureMessages.containerConflict(named, container));
  }
  return { container: named, authKind, connect: (sdk) => new sdk.ContainerClient(href, credential, PIPELINE_OPTIONS) };
}

/** Emulator and IP-address endpoints put the account in the path (`/devstoreaccount1/<container>`). */
const PATH_STYLE_HOST = /^.*:.*:.*$|^(localhost|host\.docker\.internal)(:[0-9]+)?$|^(\d{1,3})(\.\d{1,3}){3}(:[0-9]+)?$/;
const PATH_STYLE_PORTS = new Set([
  '10000',
  '10001',
  '10002',
  '10003',
  '10004',
  '10100',
  '10101',
  '10102',
  '10103',
  '10104',
  '11000',
  '11001',
  '11002',
  '11003',
  '11004',
  '11100',
  '11101',
  '11102',
  '11103',
  '11104',
]);

/**
 * The container a URL names, if any, found the way the SDK addresses requests (ContainerClient's
 * own parser reports "undefined" for a path-style account URL instead of failing).
 */
function containerInUrl(url: URL): string | undefined {
  const segments = url.pathname.split('/');
  let index = 1;
  if (url.hostname.split('.')[1] !== 'blob' && (PATH_STYLE_HOST.test(url.host) || PATH_STYLE_PORTS.has(url.port))) {
    index = 2;
  }
  const segment = segments[index];
  return segment ? decodeURIComponent(segment) : undefined;
}

function authKindOf(credential: unknown, url: string, otherwise: AzureAuthKind): AzureAuthKind {
  if (credential && typeof (credential as { getToken?: unknown }).getToken === 'function') return 'token';
  if (credential && typeof (credential as { computeHMACSHA256?: unknown }).computeHMACSHA256 === 'function') {
    return 'shared-key';
  }
  try {
    if (new URL(url).searchParams.has('sig')) return 'sas';
  } catch {
    return 'unknown';
  }
  // An AnonymousCredential (or none, with url) and no SAS: nothing authenticates the requests.
  return credential ? 'anonymous' : otherwise;
}
