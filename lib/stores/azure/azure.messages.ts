/**
 * The texts of AzureBlobLeaseStore. None may include a connection string, account key or SAS: they are
 * built from option names, status codes, error codes and request ids only, never from a raw SDK message
 * (it may quote a URL with its SAS).
 */
export const azureMessages = {
  leaseDurationReason: 'Azure Blob leases last 15 to 60 seconds, in whole seconds',
  leaseDurationInvalid: (value: number) =>
    `leaseDurationMs must be a whole number of seconds from 15000 to 60000 for AzureBlobLeaseStore; got ${value}`,
  optionsExclusive: (given: readonly string[]) =>
    `AzureBlobLeaseStore: pass exactly one of connectionString, url or containerClient (got ${given.length ? given.join(' and ') : 'none of them'})`,
  optionInvalid: (option: string, expected: string) => `AzureBlobLeaseStore: ${option} ${expected}`,
  connectionStringInvalid:
    'AzureBlobLeaseStore: connectionString is not a valid Azure Storage connection string (expected "DefaultEndpointsProtocol=https;AccountName=…;AccountKey=…;EndpointSuffix=core.windows.net", "BlobEndpoint=…;SharedAccessSignature=…" or "UseDevelopmentStorage=true")',
  containerName: (value: unknown) =>
    `AzureBlobLeaseStore: container must be 3–63 lowercase letters, digits or single hyphens, starting and ending with a letter or digit (got ${JSON.stringify(value)})`,
  containerConflict: (fromUrl: string, option: string) =>
    `AzureBlobLeaseStore: url names container "${fromUrl}" but container is "${option}"; pass an account URL with container, or a container URL alone`,
  renewedForeignLease: (election: string) =>
    `the lease of election "${election}" is no longer ours (the service answered the renewal for another lease id)`,
  termNotWritten: (election: string, detail: string) =>
    `the lease of election "${election}" was acquired but its term could not be recorded, so it was given back: ${detail}`,
  refused: (operation: string, container: string, failure: AzureFailure, hint: string) =>
    `AzureBlobLeaseStore: ${operation} on container "${container}" was refused (${describeAzureFailure(failure)}): ${hint}`,
  failed: (operation: string, container: string, failure: AzureFailure) =>
    `AzureBlobLeaseStore: ${operation} on container "${container}" failed (${describeAzureFailure(failure)}); will retry`,
  hintRbac:
    'grant the identity the RBAC role "Storage Blob Data Contributor" scoped to the container (or its storage account); new role assignments can take a few minutes to apply. If the account has a firewall or private endpoint, also allow this client',
  hintToken:
    'the token credential was rejected: check its tenant, client id/secret or managed identity, and that it requests the storage audience (https://storage.azure.com/.default)',
  hintCredentialUnavailable:
    'the token credential could not get a token: configure a managed identity, workload identity, environment credentials or `az login` for DefaultAzureCredential',
  hintSharedKey:
    'the service rejected the request signature: check the account name and account key (AccountKey in the connection string, or the StorageSharedKeyCredential)',
  hintSharedKeyDisabled:
    'shared key access is disabled on this storage account: use a TokenCredential (e.g. DefaultAzureCredential) with the RBAC role "Storage Blob Data Contributor" on the container',
  hintSas:
    'check the SAS: it must be valid now (start and expiry), be signed for the blob service, and grant read, write and create on the container',
  hintNetworkRules:
    "the storage account's firewall or network rules block this client: allow its IP address or virtual network",
  hintAnonymous:
    'no credential was given: pass credential (a TokenCredential or StorageSharedKeyCredential) or a SAS URL',
  hintBadRequest:
    'the request was malformed: check the container name (3–63 lowercase letters, digits or hyphens), blobPrefix and election name',
  hintNotFound: 'the storage account or endpoint was not found: check the account name and the url / BlobEndpoint',
  hintOther: 'retrying will not help until the configuration is fixed',
} as const;

/** The parts of an Azure failure safe to quote: HTTP status, x-ms-error-code, x-ms-request-id. */
export interface AzureFailure {
  status?: number;
  code?: string;
  requestId?: string;
}

/** `403 AuthorizationPermissionMismatch, request id …` (or `no response ECONNREFUSED`). */
function describeAzureFailure({ status, code, requestId }: AzureFailure): string {
  const parts = [[status ?? 'no response', code].filter(Boolean).join(' ')];
  if (requestId) parts.push(`request id ${requestId}`);
  return parts.join(', ');
}
