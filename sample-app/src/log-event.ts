import type { Logger } from '@nestjs/common';

/** `LOG_FORMAT=json` switches Nest's logger to one JSON object per line (see main.ts). */
export const jsonLogs = process.env.LOG_FORMAT === 'json';

/**
 * Logs one notable event: a sentence for people, or — with `LOG_FORMAT=json` — the sentence plus
 * machine-readable fields, which log pipelines (and the demo in scripts/demo.mjs) read without
 * parsing prose.
 */
export function logEvent(logger: Logger, event: string, fields: Record<string, unknown>, text: string): void {
  logger.log(jsonLogs ? { event, ...fields, text } : text);
}
