import type { BlockBlobClient, ContainerClient } from '@azure/storage-blob';
import type { LeaseStoreError } from '../../shared/errors.js';
import { type AzureBlobLeaseStoreOptions, azureContainerClient, loadContainerClient } from './azure-client.js';
import { type AzureAuthKind, type AzureOperation, classifyAzureError } from './azure-errors.js';

/**
 * Where AzureBlobLeaseStore's blobs live (the container, and one lease blob per election under the
 * prefix) and how their failures are named: with the operation, election, container and kind of
 * credential, never a key or SAS.
 */
export class AzureBlobs {
  /** Name of the container holding the lease blobs. */
  readonly container: string;
  readonly prefix: string;
  /** Built once the SDK is loaded (import started at construction, awaited by the first call). */
  readonly client: Promise<ContainerClient>;
  private readonly authKind: AzureAuthKind;

  constructor(options: AzureBlobLeaseStoreOptions) {
    const plan = azureContainerClient(options);
    ({ container: this.container, authKind: this.authKind, blobPrefix: this.prefix } = plan);
    this.client = loadContainerClient(plan);
    // Awaited (and its failure reported) by each call; this only keeps it from counting as unhandled.
    this.client.catch(() => undefined);
  }

  /** The lease blob of `election`, or another blob of it named by `suffix`. */
  async blob(election: string, suffix = ''): Promise<BlockBlobClient> {
    return (await this.client).getBlockBlobClient(this.prefix + election + suffix);
  }

  classify(error: unknown, operation: AzureOperation, election: string, signal: AbortSignal): LeaseStoreError {
    return classifyAzureError(error, {
      operation,
      election,
      container: this.container,
      authKind: this.authKind,
      signal,
    });
  }
}
