import { UnknownJobError } from '@leaderlease/nestjs';
import { TransientLeaseStoreError } from '@leaderlease/nestjs/store';
import {
  BadRequestException,
  type HttpException,
  InternalServerErrorException,
  NotFoundException,
  ServiceUnavailableException,
} from '@nestjs/common';

/**
 * A job-control call's failure as HTTP, with the library's message (which never carries a
 * connection string or key): 404 for a job this app does not run, 400 for a value the library
 * refused before sending anything (its TypeError/RangeError), 503 when the store did not answer in
 * time (worth a retry), 500 for the rest (the store refused us, or cannot keep job commands).
 */
export function jobControlHttpError(error: unknown, what: string): HttpException {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof UnknownJobError) return new NotFoundException(message);
  if (error instanceof TypeError || error instanceof RangeError) return new BadRequestException(message);
  if (error instanceof TransientLeaseStoreError) return new ServiceUnavailableException(`${what}: ${message}`);
  return new InternalServerErrorException(`${what}: ${message}`);
}
