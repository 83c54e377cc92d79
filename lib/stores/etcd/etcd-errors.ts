import {
  EtcdAuthenticationFailedError,
  EtcdError,
  EtcdPermissionDeniedError,
  EtcdRoleNotGrantedError,
  EtcdUserNotFoundError,
  GRPCUnauthenticatedError,
} from 'etcd3';
import { FatalLeaseStoreError, type LeaseStoreError, TransientLeaseStoreError } from '../../shared/errors.js';
import { storeMessages } from '../store.messages.js';
import { etcdMessages } from './etcd.messages.js';

const STORE = 'EtcdLeaseStore';

/** The one place etcd failures become typed outcomes: by error class, never by a driver's message. */
export function classifyEtcdError(error: unknown, prefix: string): LeaseStoreError {
  if (error instanceof Error) {
    if (error instanceof EtcdPermissionDeniedError || error instanceof EtcdRoleNotGrantedError) {
      return new FatalLeaseStoreError(etcdMessages.permissionDenied(prefix), { cause: error });
    }
    if (
      error instanceof EtcdAuthenticationFailedError ||
      error instanceof GRPCUnauthenticatedError ||
      error instanceof EtcdUserNotFoundError
    ) {
      return new FatalLeaseStoreError(etcdMessages.authFailed(error.constructor.name), { cause: error });
    }
    if (/etcdserver: (user name is empty|authentication is not enabled|invalid auth management)/.test(error.message)) {
      return new FatalLeaseStoreError(etcdMessages.authFailed('authentication not enabled'), { cause: error });
    }
    if (error instanceof EtcdError) {
      return new TransientLeaseStoreError(storeMessages.backend.failed(STORE, error.constructor.name), {
        cause: error,
      });
    }
  }
  const name = error instanceof Error ? error.constructor.name : 'unknown error';
  return new TransientLeaseStoreError(storeMessages.backend.unreachable(STORE, name), { cause: error });
}
