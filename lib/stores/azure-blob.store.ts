import { randomUUID } from 'node:crypto';
import {
  BlobServiceClient,
  type BlockBlobClient,
  ContainerClient,
  type newPipeline,
  type StoragePipelineOptions,
} from '@azure/storage-blob';
import { type AzureFailure, messages } from '../leader-election.messages.js';
import {
  type AcquireRequest,
  type AcquireResult,
  type CallOptions,
  FatalLeaseStoreError,
  type Lease,
  type LeaseInfo,
  LeaseLostError,
  type LeaseStore,
  type LeaseStoreError,
  type LeaseStoreLimits,
  type RenewOptions,
  TransientLeaseStoreError,
} from './lease-store.js';
import { throwIfAborted, untilAborted } from '../shared/abort.js';

/**
 * What `url` accepts: a `StorageSharedKeyCredential`, an `AnonymousCredential` or any `TokenCredential`
 * (e.g. `DefaultAzureCredential` from `@azure/identity`). Taken from the SDK so we need not depend
 * on `@azure/core-auth` ourselves.
 */
export type AzureBlobCredential = NonNullable<Parameters<typeof newPipeline>[0]>;

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
}

/** How requests authenticate: picks the hint of a 401/403 message. */
export type AzureAuthKind = 'shared-key' | 'token' | 'sas' | 'anonymous' | 'unknown';

/** The operation named in error messages. */
export type AzureOperation = 'acquire' | 'renew' | 'release' | 'read' | 'record term';

const DEFAULT_CONTAINER = 'leader-election';
const TERM_KEY = 'term';
const HOLDER_KEY = 'holder';
/** How long a failed term bump may spend giving the lease back when the caller's signal already ended. */
const GIVE_BACK_TIMEOUT_MS = 5_000;
/** Azure's container naming rules: 3–63 chars, lowercase letters/digits, single inner hyphens. */
const CONTAINER_PATTERN = /^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){2,62}$/;

/**
 * The SDK retries up to 4 times with exponential back-off (about 16 s in all) by default, longer
 * than a renew deadline. The elector retries on its own schedule, so one try per call is right.
 */
const PIPELINE_OPTIONS: StoragePipelineOptions = { retryOptions: { maxTries: 1 } };

/** Lease-state conflicts: the lease exists but is not (or no longer) ours. */
const LEASE_CONFLICT_CODES = new Set([
  'LeaseAlreadyPresent',
  'LeaseIdMismatchWithLeaseOperation',
  'LeaseIdMismatchWithBlobOperation',
  'LeaseIdMissing',
  'LeaseIsBrokenAndCannotBeRenewed',
  'LeaseIsBreakingAndCannotBeAcquired',
  'LeaseIsBreakingAndCannotBeChanged',
  'LeaseNotPresentWithLeaseOperation',
  'LeaseNotPresentWithBlobOperation',
  'LeaseLost',
]);
const MISSING_CODES = new Set(['BlobNotFound', 'ContainerNotFound']);
const ALREADY_EXISTS_CODES = new Set(['BlobAlreadyExists', 'ConditionNotMet', 'LeaseIdMissing']);

/**
 * Leases as Azure Blob leases: one blob per election, whose native lease (15–60 s, kept by the
 * service's clock) is the leadership. The blob's metadata carries the fencing `term` (bumped under
 * the new lease on every acquisition) and the `holder` identity, so others can read who leads.
 *
 * Every call is bounded by its AbortSignal and makes a single try (no SDK retries).
 */
export class AzureBlobLeaseStore implements LeaseStore {
  readonly name = 'AzureBlobLeaseStore';
  readonly limits: LeaseStoreLimits = {
    minLeaseDurationMs: 15_000,
    maxLeaseDurationMs: 60_000,
    leaseDurationStepMs: 1_000,
    reason: messages.azure.leaseDurationReason,
  };
  /** Name of the container holding the lease blobs. */
  readonly container: string;

  private readonly containerClient: ContainerClient;
  private readonly blobPrefix: string;
  private readonly authKind: AzureAuthKind;

  constructor(options: AzureBlobLeaseStoreOptions) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(messages.azure.optionsExclusive([]));
    }
    const { connectionString, url, credential, containerClient, container, blobPrefix = '' } = options;
    const given = (['connectionString', 'url', 'containerClient'] as const).filter((key) => options[key] !== undefined);
    if (given.length !== 1) throw new TypeError(messages.azure.optionsExclusive(given));
    if (typeof blobPrefix !== 'string' || blobPrefix.length > 512) {
      throw new TypeError(messages.azure.optionInvalid('blobPrefix', 'must be a string of at most 512 characters'));
    }
    this.blobPrefix = blobPrefix;
    if (credential !== undefined && url === undefined) {
      throw new TypeError(messages.azure.optionInvalid('credential', 'is only used with url'));
    }
    if (container !== undefined && (typeof container !== 'string' || !CONTAINER_PATTERN.test(container))) {
      throw new TypeError(messages.azure.containerName(container));
    }

    if (containerClient !== undefined) {
      if (typeof containerClient?.getBlockBlobClient !== 'function') {
        throw new TypeError(
          messages.azure.optionInvalid('containerClient', 'must be a ContainerClient from @azure/storage-blob'),
        );
      }
      if (container !== undefined && container !== containerClient.containerName) {
        throw new TypeError(messages.azure.containerConflict(containerClient.containerName, container));
      }
      this.containerClient = containerClient;
      this.authKind = authKindOf(containerClient.credential, containerClient.url, 'unknown');
    } else if (connectionString !== undefined) {
      if (typeof connectionString !== 'string' || connectionString.trim() === '') {
        throw new TypeError(
          messages.azure.optionInvalid(
            'connectionString',
            'must be a non-empty string (is the environment variable set?)',
          ),
        );
      }
      try {
        this.containerClient = new ContainerClient(connectionString, container ?? DEFAULT_CONTAINER, PIPELINE_OPTIONS);
      } catch {
        // No cause attached: the SDK's error may quote parts of the string.
        throw new TypeError(messages.azure.connectionStringInvalid);
      }
      this.authKind = /(^|;)\s*SharedAccessSignature=/i.test(connectionString) ? 'sas' : 'shared-key';
    } else {
      this.containerClient = clientFromUrl(url, credential, container);
      this.authKind = authKindOf(credential, this.containerClient.url, 'anonymous');
    }
    this.container = this.containerClient.containerName;
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const { election, identity, signal } = request;
    throwIfAborted(signal);
    const seconds = leaseSeconds(request.leaseDurationMs);
    const blob = this.blob(election);
    // A fresh id per acquisition: a lease id from an earlier term can never match this one.
    const leaseId = randomUUID();
    const leaseClient = blob.getBlobLeaseClient(leaseId);

    try {
      await bounded(signal, async (abortSignal) => {
        try {
          await leaseClient.acquireLease(seconds, { abortSignal });
        } catch (error) {
          if (!isMissing(error)) throw error;
          await this.createBlob(blob, abortSignal);
          await leaseClient.acquireLease(seconds, { abortSignal });
        }
      });
    } catch (error) {
      if (isLeaseConflict(error)) return this.heldBy(election, signal);
      throw this.classify(error, 'acquire', election, signal);
    }

    // The lease is ours; record a term greater than any before it. Only our lease can write the
    // blob now, and ifMatch makes sure the term we read is the one we overwrite.
    try {
      const term = await bounded(signal, async (abortSignal) => {
        const properties = await blob.getProperties({ abortSignal, conditions: { leaseId } });
        const term = parseTerm(properties.metadata?.[TERM_KEY]) + 1;
        const metadata = { ...properties.metadata, [TERM_KEY]: String(term), [HOLDER_KEY]: encodeHolder(identity) };
        await blob.setMetadata(metadata, { abortSignal, conditions: { leaseId, ifMatch: properties.etag } });
        return term;
      });
      return { acquired: true, lease: { election, holder: identity, leaseId, term } };
    } catch (error) {
      // A lease without a fresh term must never be handed out: give it back so others need not
      // wait for it to expire, then report why.
      await this.giveBack(leaseClient, signal);
      const cause = this.classify(error, 'record term', election, signal);
      if (cause.kind !== 'transient') throw cause;
      throw new TransientLeaseStoreError(messages.azure.termNotWritten(election, cause.message), {
        cause: cause.cause,
      });
    }
  }

  /** Azure renews for the duration given at acquire; `leaseDurationMs` is the same by contract. */
  async renew(lease: Lease, options: RenewOptions): Promise<void> {
    const { signal } = options;
    throwIfAborted(signal);
    const leaseClient = this.blob(lease.election).getBlobLeaseClient(lease.leaseId);
    let renewed: string | undefined;
    try {
      renewed = (await bounded(signal, (abortSignal) => leaseClient.renewLease({ abortSignal }))).leaseId;
    } catch (error) {
      if (isLeaseConflict(error) || isMissing(error) || statusOf(error) === 412) {
        throw new LeaseLostError(messages.leaseLost(lease.election), { cause: summarize(error) });
      }
      throw this.classify(error, 'renew', lease.election, signal);
    }
    // Azurite renews an *expired* lease whatever id the request carries and answers with the id of
    // the lease it renewed: success under another id means the lease is not ours.
    if (renewed !== lease.leaseId) throw new LeaseLostError(messages.azure.renewedForeignLease(lease.election));
  }

  async release(lease: Lease, options: CallOptions): Promise<void> {
    const { signal } = options;
    throwIfAborted(signal);
    const leaseClient = this.blob(lease.election).getBlobLeaseClient(lease.leaseId);
    try {
      await bounded(signal, (abortSignal) => leaseClient.releaseLease({ abortSignal }));
    } catch (error) {
      // Not ours any more (taken, released, expired and re-leased, blob gone): nothing to give back.
      if (isLeaseConflict(error) || isMissing(error) || statusOf(error) === 412) return;
      throw this.classify(error, 'release', lease.election, signal);
    }
  }

  async read(election: string, options: CallOptions): Promise<LeaseInfo> {
    const { signal } = options;
    throwIfAborted(signal);
    let properties: Awaited<ReturnType<BlockBlobClient['getProperties']>>;
    try {
      properties = await bounded(signal, (abortSignal) => this.blob(election).getProperties({ abortSignal }));
    } catch (error) {
      if (isMissing(error)) return { held: false, term: 0 };
      throw this.classify(error, 'read', election, signal);
    }
    const term = parseTerm(properties.metadata?.[TERM_KEY]);
    // 'locked' covers 'leased' and 'breaking': in both an acquire is refused, so both count as held.
    if (properties.leaseStatus !== 'locked') return { held: false, term };
    return { held: true, holder: decodeHolder(properties.metadata?.[HOLDER_KEY]), term };
  }

  /** HTTP needs no teardown (keep-alive sockets close when idle); kept for the contract. Idempotent. */
  async close(): Promise<void> {}

  // ---- helpers --------------------------------------------------------------------------------

  private blob(election: string): BlockBlobClient {
    return this.containerClient.getBlockBlobClient(this.blobPrefix + election);
  }

  /** Creates the container and an empty blob when missing; losing either creation race is fine. */
  private async createBlob(blob: BlockBlobClient, abortSignal: AbortSignal): Promise<void> {
    // ifNoneMatch '*': never overwrite an existing blob, it carries the term.
    const upload = () => blob.upload('', 0, { abortSignal, conditions: { ifNoneMatch: '*' } });
    try {
      await upload();
      return;
    } catch (error) {
      if (isAlreadyThere(error)) return;
      if (codeOf(error) !== 'ContainerNotFound') throw error;
    }
    await this.containerClient.createIfNotExists({ abortSignal });
    try {
      await upload();
    } catch (error) {
      if (!isAlreadyThere(error)) throw error;
    }
  }

  private async heldBy(election: string, signal: AbortSignal): Promise<AcquireResult> {
    try {
      const info = await this.read(election, { signal });
      return { acquired: false, holder: info.holder, term: info.term };
    } catch {
      // Who holds it is a courtesy; failing to say must not turn "held" into an error.
      return { acquired: false };
    }
  }

  /** Best-effort release of a lease we must not keep; waits no longer than the caller's signal. */
  private async giveBack(leaseClient: ReturnType<BlockBlobClient['getBlobLeaseClient']>, signal: AbortSignal) {
    const release = leaseClient.releaseLease({ abortSignal: AbortSignal.timeout(GIVE_BACK_TIMEOUT_MS) });
    try {
      await bounded(signal, () => release);
    } catch {
      // Expires on its own within the lease duration.
    }
  }

  private classify(error: unknown, operation: AzureOperation, election: string, signal: AbortSignal): LeaseStoreError {
    return classifyAzureError(error, {
      operation,
      election,
      container: this.container,
      authKind: this.authKind,
      signal,
    });
  }
}

// ---- error classification -----------------------------------------------------------------------

/** What {@link classifyAzureError} needs besides the error, to name the operation and the fix. */
export interface AzureErrorContext {
  operation: AzureOperation;
  election: string;
  container: string;
  authKind: AzureAuthKind;
  signal?: AbortSignal;
}

/**
 * The one place Azure failures become typed outcomes. Messages are built from the operation, status,
 * error code and request id only (never the SDK's message, which can quote a URL with its SAS), and
 * the cause is a summary of those fields rather than the SDK error (whose request holds the URL).
 */
export function classifyAzureError(error: unknown, context: AzureErrorContext): LeaseStoreError {
  if (isLeaseStoreError(error)) return error;
  const { operation, election, container, authKind, signal } = context;
  const status = statusOf(error);
  const code = codeOf(error);
  const failure: AzureFailure = { status, code, requestId: requestIdOf(error) };
  const cause = summarize(error);
  const name = (error as { name?: unknown } | null)?.name;
  const fatal = (hint: string, quoted: AzureFailure = failure) =>
    new FatalLeaseStoreError(messages.azure.refused(operation, container, quoted, hint), { cause });
  const transient = (quoted: AzureFailure = failure) =>
    new TransientLeaseStoreError(messages.azure.failed(operation, container, quoted), { cause });

  if (signal?.aborted || name === 'AbortError' || name === 'TimeoutError') {
    return new TransientLeaseStoreError(messages.aborted(signal?.aborted ? signal.reason : error), { cause });
  }
  // @azure/identity failures happen before any request is sent; their names are their codes.
  if (
    name === 'CredentialUnavailableError' ||
    name === 'AggregateAuthenticationError' ||
    name === 'AuthenticationRequiredError'
  ) {
    return fatal(messages.azure.hintCredentialUnavailable, { code: name });
  }
  if (name === 'AuthenticationError') {
    // A 4xx from Microsoft Entra ID is a configuration problem; anything else may pass.
    const configuration = status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
    return configuration ? fatal(messages.azure.hintToken, { status, code: name }) : transient({ status, code: name });
  }
  if (code !== undefined && LEASE_CONFLICT_CODES.has(code)) {
    return new LeaseLostError(messages.leaseLost(election), { cause });
  }
  if (status === 401 || status === 403) return fatal(authHint(code, authKind));
  if (status === 400) return fatal(messages.azure.hintBadRequest);
  // Blob and container 404s are handled by each operation; any other is the account or endpoint.
  if (status === 404 && (code === undefined || !MISSING_CODES.has(code))) return fatal(messages.azure.hintNotFound);
  if (status !== undefined && status >= 400 && status < 500 && ![404, 408, 409, 412, 429].includes(status)) {
    return fatal(messages.azure.hintOther);
  }
  // 5xx, 408, 429, other 409/412 (e.g. ContainerBeingDeleted), network errors (ECONNREFUSED,
  // ECONNRESET, ETIMEDOUT, ENOTFOUND, REQUEST_SEND_ERROR, …) and anything unknown: retry.
  return transient({ ...failure, code: code ?? networkCode(error) });
}

function authHint(code: string | undefined, authKind: AzureAuthKind): string {
  if (code === 'KeyBasedAuthenticationNotPermitted') return messages.azure.hintSharedKeyDisabled;
  if (code === 'AuthorizationSourceIPMismatch') return messages.azure.hintNetworkRules;
  switch (authKind) {
    case 'shared-key':
      return messages.azure.hintSharedKey;
    case 'sas':
      return messages.azure.hintSas;
    case 'anonymous':
      return messages.azure.hintAnonymous;
    case 'token':
      return code === 'AuthenticationFailed' || code === 'InvalidAuthenticationInfo'
        ? messages.azure.hintToken
        : messages.azure.hintRbac;
    default:
      return code === 'AuthenticationFailed' ? messages.azure.hintSharedKey : messages.azure.hintRbac;
  }
}

interface AzureErrorShape {
  name?: unknown;
  code?: unknown;
  statusCode?: unknown;
  message?: unknown;
  details?: { errorCode?: unknown; requestId?: unknown } | null;
  response?: { headers?: { get?: (name: string) => string | undefined } } | null;
}

function statusOf(error: unknown): number | undefined {
  const status = (error as AzureErrorShape | null)?.statusCode;
  return typeof status === 'number' && status > 0 ? status : undefined;
}

/** The service's error code (x-ms-error-code), else the client-side code (ECONNREFUSED, …). */
function codeOf(error: unknown): string | undefined {
  const shape = error as AzureErrorShape | null;
  const code = shape?.details?.errorCode ?? shape?.code;
  return typeof code === 'string' && code !== '' ? code : undefined;
}

/** x-ms-request-id, which Azure support asks for; error responses rarely deserialize it into details. */
function requestIdOf(error: unknown): string | undefined {
  const shape = error as AzureErrorShape | null;
  let id = shape?.details?.requestId;
  if (id === undefined && typeof shape?.response?.headers?.get === 'function')
    id = shape.response.headers.get('x-ms-request-id');
  return typeof id === 'string' && /^[\w-]{1,100}$/.test(id) ? id : undefined;
}

/** ECONNREFUSED etc. hidden in a REQUEST_SEND_ERROR's message, which we do not otherwise quote. */
function networkCode(error: unknown): string | undefined {
  const message = (error as AzureErrorShape | null)?.message;
  return typeof message === 'string' ? /\b(E[A-Z]{3,})\b/.exec(message)?.[1] : undefined;
}

/** The fields of an SDK error that are safe to keep: never its request (URL with SAS, headers). */
function summarize(error: unknown): Record<string, unknown> {
  const name = (error as AzureErrorShape | null)?.name;
  return {
    name: typeof name === 'string' ? name : typeof error,
    statusCode: statusOf(error),
    code: codeOf(error) ?? networkCode(error),
    requestId: requestIdOf(error),
  };
}

function isLeaseStoreError(error: unknown): error is LeaseStoreError {
  const kind = (error as { kind?: unknown } | null)?.kind;
  return error instanceof Error && (kind === 'lost' || kind === 'transient' || kind === 'fatal');
}

function isLeaseConflict(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && LEASE_CONFLICT_CODES.has(code);
}

function isMissing(error: unknown): boolean {
  const code = codeOf(error);
  // A HEAD answer has no body; its code still arrives in x-ms-error-code, but be lenient.
  return statusOf(error) === 404 && (code === undefined || MISSING_CODES.has(code));
}

function isAlreadyThere(error: unknown): boolean {
  const status = statusOf(error);
  const code = codeOf(error);
  return (status === 409 || status === 412) && (code === undefined || ALREADY_EXISTS_CODES.has(code));
}

// ---- small helpers ------------------------------------------------------------------------------

/** Runs `run` with `signal` and settles as soon as the signal aborts, whatever the pipeline does. */
function bounded<T>(signal: AbortSignal, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  throwIfAborted(signal);
  return untilAborted(signal, run(signal));
}

function leaseSeconds(leaseDurationMs: number): number {
  const seconds = leaseDurationMs / 1000;
  if (!Number.isInteger(seconds) || seconds < 15 || seconds > 60) {
    throw new FatalLeaseStoreError(messages.azure.leaseDurationInvalid(leaseDurationMs));
  }
  return seconds;
}

function parseTerm(value: string | undefined): number {
  const term = Number(value);
  return Number.isSafeInteger(term) && term > 0 ? term : 0;
}

// Metadata values travel as HTTP headers (ASCII only); identities may not be.
function encodeHolder(identity: string): string {
  return encodeURIComponent(identity);
}

function decodeHolder(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function clientFromUrl(
  url: unknown,
  credential: AzureBlobCredential | undefined,
  container: string | undefined,
): ContainerClient {
  let parsed: URL | undefined;
  try {
    parsed = typeof url === 'string' ? new URL(url) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    // Not echoed: it may carry a SAS.
    throw new TypeError(
      messages.azure.optionInvalid('url', 'must be an http(s) URL of a storage account or container'),
    );
  }
  if (
    credential !== undefined &&
    typeof (credential as { getToken?: unknown }).getToken !== 'function' &&
    typeof (credential as { create?: unknown }).create !== 'function'
  ) {
    throw new TypeError(
      messages.azure.optionInvalid(
        'credential',
        'must be a TokenCredential (e.g. DefaultAzureCredential) or a StorageSharedKeyCredential',
      ),
    );
  }
  const href = parsed.href;
  const named = containerInUrl(parsed);
  if (named === undefined) {
    return new BlobServiceClient(href, credential, PIPELINE_OPTIONS).getContainerClient(container ?? DEFAULT_CONTAINER);
  }
  if (container !== undefined && container !== named) {
    throw new TypeError(messages.azure.containerConflict(named, container));
  }
  return new ContainerClient(href, credential, PIPELINE_OPTIONS);
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
