import { BadRequestException } from '@nestjs/common';

// The sample app checks its JSON bodies by hand (it has no validation pipe); a 400 names what is wrong.

/** The body's fields: none for an empty body; 400 (showing `example`) for anything but a JSON object. */
export function bodyFields(body: unknown, example: string): Record<string, unknown> {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body))
    throw new BadRequestException(`expected a JSON object: ${example}`);
  return body as Record<string, unknown>;
}

/** `election` if this app runs it; otherwise 400 naming the elections it runs. */
export function parseElection(election: unknown, elections: readonly string[]): string {
  if (typeof election !== 'string' || !elections.includes(election)) {
    throw new BadRequestException(
      `unknown election ${JSON.stringify(election)}: this app runs ${elections.map((e) => `"${e}"`).join(', ')}`,
    );
  }
  return election;
}
