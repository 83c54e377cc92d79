import type { BlobRequestConditions, BlockBlobClient, ContainerClient } from '@azure/storage-blob';
import type { StoreCallKit } from '../store-support.js';
import type { AzureBlobs } from './azure-blobs.js';
import { type AzureOperation, codeOf, isMissing } from './azure-errors.js';

// The reads and writes of a JSON blob that leader state (azure-state.ts), handover requests
// (azure-handover.ts) and shared records (azure-records.ts) share: one GET or one PUT each, the
// conditions the caller's protocol needs, no SDK retries (the pipeline has none).

/** A blob's content as text, with the ETag and metadata of that very version. */
export interface BlobText {
  text: string;
  etag?: string;
  metadata?: Record<string, string>;
}

/** The blob's content; undefined when the blob or its whole container does not exist. */
export async function downloadText(
  blob: BlockBlobClient,
  abortSignal: AbortSignal,
  conditions?: BlobRequestConditions,
): Promise<BlobText | undefined> {
  let response: Awaited<ReturnType<BlockBlobClient['download']>>;
  try {
    response = await blob.download(0, undefined, { abortSignal, conditions });
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  const text = await readAll(response.readableStreamBody);
  return { text, etag: response.etag, metadata: response.metadata };
}

export async function readAll(stream: NodeJS.ReadableStream | undefined): Promise<string> {
  if (!stream) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Puts `json` as the blob's content (one Put Blob, under `conditions` when given), making the
 * container when it is missing if `container` is given. A failed condition rejects with the
 * service's 409/412.
 */
export async function putJson(
  container: ContainerClient | undefined,
  blob: BlockBlobClient,
  json: string,
  abortSignal: AbortSignal,
  conditions?: BlobRequestConditions,
): Promise<void> {
  const upload = () =>
    blob.upload(json, Buffer.byteLength(json), {
      abortSignal,
      blobHTTPHeaders: { blobContentType: 'application/json' },
      ...(conditions && { conditions }),
    });
  try {
    await upload();
    return;
  } catch (error) {
    if (container === undefined || codeOf(error) !== 'ContainerNotFound') throw error;
  }
  // createIfNotExists takes the "already exists" answer of a lost creation race as success.
  await container.createIfNotExists({ abortSignal });
  await upload();
}

/**
 * Runs `work` on the blob `<prefix><election><suffix>` as one store call: bounded by `signal`
 * (through the store's call kit), its failures classified as `operation` on `election`.
 */
export function onBlob<T>(
  calls: Pick<StoreCallKit, 'run'>,
  blobs: AzureBlobs,
  target: { election: string; suffix: string; operation: AzureOperation },
  signal: AbortSignal,
  work: (blob: BlockBlobClient, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const { election, suffix, operation } = target;
  return calls.run(signal, async () => {
    const blob = await blobs.blob(election, suffix);
    try {
      return await work(blob, signal);
    } catch (error) {
      throw blobs.classify(error, operation, election, signal);
    }
  });
}
