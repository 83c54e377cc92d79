import { FatalLeaseStoreError, type LeaseStoreError, TransientLeaseStoreError } from '../../shared/errors.js';
import { storeMessages } from '../store.messages.js';
import { redisMessages } from './redis.messages.js';

const STORE = 'RedisLeaseStore';

/** The one place Redis failures become typed outcomes: by reply code, never by a reply's text. */
export function classifyRedisError(error: unknown, prefix: string): LeaseStoreError {
  const reply = replyCode(error);
  // ioredis attaches the failed command to a reply error, and HELLO/AUTH carry the password.
  const options = carriesCredentials(error) ? undefined : { cause: error };
  switch (reply) {
    case 'NOAUTH':
    case 'WRONGPASS':
      return new FatalLeaseStoreError(redisMessages.authFailed(reply), options);
    case 'NOPERM':
      return new FatalLeaseStoreError(redisMessages.permissionDenied(prefix), options);
    case 'READONLY':
      return new TransientLeaseStoreError(redisMessages.replicaReadOnly, options);
    case undefined:
      return new TransientLeaseStoreError(storeMessages.backend.unreachable(STORE, networkCode(error)), options);
    default:
      return new TransientLeaseStoreError(storeMessages.backend.failed(STORE, reply), options);
  }
}

/** The server's error code (first word of a reply error, e.g. NOPERM); never the rest of it. */
export function replyCode(error: unknown): string | undefined {
  if (!(error instanceof Error) || error.name !== 'ReplyError') return undefined;
  return /^[A-Z]+/.exec(error.message)?.[0] ?? 'ERR';
}

/** A reply error to the connection handshake quotes the credentials in its `command` field. */
function carriesCredentials(error: unknown): boolean {
  const name = (error as { command?: { name?: unknown } } | undefined)?.command?.name;
  return typeof name === 'string' && /^(hello|auth)$/i.test(name);
}

function networkCode(error: unknown): string {
  const value = (error as { code?: unknown } | undefined)?.code;
  if (typeof value === 'string') return value;
  if (error instanceof Error) {
    if (/closed/i.test(error.message)) return 'connection closed';
    if (/timed? ?out/i.test(error.message)) return 'timeout';
    return error.name;
  }
  return 'unknown error';
}
