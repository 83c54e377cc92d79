import {
  FatalLeaseStoreError,
  LeaseLostError,
  type LeaseStoreError,
  TransientLeaseStoreError,
} from '../../shared/errors.js';
import { sharedMessages } from '../../shared/messages.js';
import { storeMessages } from '../store.messages.js';
import { type AzureFailure, azureMessages } from './azure.messages.js';

/** How requests authenticate: picks the hint of a 401/403 message. */
export type AzureAuthKind = 'shared-key' | 'token' | 'sas' | 'anonymous' | 'unknown';

/** The operation named in error messages. */
export type AzureOperation =
  | 'acquire'
  | 'renew'
  | 'release'
  | 'read'
  | 'record term'
  | 'record meta'
  | 'write state'
  | 'read state'
  | 'request handover'
  | 'read handover'
  | 'clear handover'
  | 'read record'
  | 'write record'
  | 'list elections';

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
    new FatalLeaseStoreError(azureMessages.refused(operation, container, quoted, hint), { cause });
  const transient = (quoted: AzureFailure = failure) =>
    new TransientLeaseStoreError(azureMessages.failed(operation, container, quoted), { cause });

  if (signal?.aborted || name === 'AbortError' || name === 'TimeoutError') {
    return new TransientLeaseStoreError(sharedMessages.aborted(signal?.aborted ? signal.reason : error), { cause });
  }
  // @azure/identity failures happen before any request is sent; their names are their codes.
  if (
    name === 'CredentialUnavailableError' ||
    name === 'AggregateAuthenticationError' ||
    name === 'AuthenticationRequiredError'
  ) {
    return fatal(azureMessages.hintCredentialUnavailable, { code: name });
  }
  if (name === 'AuthenticationError') {
    // A 4xx from Microsoft Entra ID is a configuration problem; anything else may pass.
    const configuration = status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
    return configuration ? fatal(azureMessages.hintToken, { status, code: name }) : transient({ status, code: name });
  }
  if (code !== undefined && LEASE_CONFLICT_CODES.has(code)) {
    return new LeaseLostError(storeMessages.leaseLost(election), { cause });
  }
  if (status === 401 || status === 403) return fatal(authHint(code, authKind));
  if (status === 400) return fatal(azureMessages.hintBadRequest);
  // Blob and container 404s are handled by each operation; any other is the account or endpoint.
  if (status === 404 && (code === undefined || !MISSING_CODES.has(code))) return fatal(azureMessages.hintNotFound);
  if (status !== undefined && status >= 400 && status < 500 && ![404, 408, 409, 412, 429].includes(status)) {
    return fatal(azureMessages.hintOther);
  }
  // 5xx, 408, 429, other 409/412 (e.g. ContainerBeingDeleted), network errors (ECONNREFUSED,
  // ECONNRESET, ETIMEDOUT, ENOTFOUND, REQUEST_SEND_ERROR, …) and anything unknown: retry.
  return transient({ ...failure, code: code ?? networkCode(error) });
}

function authHint(code: string | undefined, authKind: AzureAuthKind): string {
  if (code === 'KeyBasedAuthenticationNotPermitted') return azureMessages.hintSharedKeyDisabled;
  if (code === 'AuthorizationSourceIPMismatch') return azureMessages.hintNetworkRules;
  switch (authKind) {
    case 'shared-key':
      return azureMessages.hintSharedKey;
    case 'sas':
      return azureMessages.hintSas;
    case 'anonymous':
      return azureMessages.hintAnonymous;
    case 'token':
      return code === 'AuthenticationFailed' || code === 'InvalidAuthenticationInfo'
        ? azureMessages.hintToken
        : azureMessages.hintRbac;
    default:
      return code === 'AuthenticationFailed' ? azureMessages.hintSharedKey : azureMessages.hintRbac;
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

export function statusOf(error: unknown): number | undefined {
  const status = (error as AzureErrorShape | null)?.statusCode;
  return typeof status === 'number' && status > 0 ? status : undefined;
}

/** The service's error code (x-ms-error-code), else the client-side code (ECONNREFUSED, …). */
export function codeOf(error: unknown): string | undefined {
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
export function summarize(error: unknown): Record<string, unknown> {
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

export function isLeaseConflict(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && LEASE_CONFLICT_CODES.has(code);
}

export function isMissing(error: unknown): boolean {
  const code = codeOf(error);
  // A HEAD answer has no body; its code still arrives in x-ms-error-code, but be lenient.
  return statusOf(error) === 404 && (code === undefined || MISSING_CODES.has(code));
}

export function isAlreadyThere(error: unknown): boolean {
  const status = statusOf(error);
  const code = codeOf(error);
  return (status === 409 || status === 412) && (code === undefined || ALREADY_EXISTS_CODES.has(code));
}
