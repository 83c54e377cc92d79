import { setTimeout as delay } from 'node:timers/promises';
import type { CallOptions } from '../stores/lease-store.js';

/** One store call's options: bounded by `timeoutMs`, and cut short by `stop` (Ctrl-C) when given. */
export function callOptions(timeoutMs: number, stop?: AbortSignal): CallOptions {
  const timeout = AbortSignal.timeout(Math.max(1, Math.ceil(timeoutMs)));
  return { signal: stop ? AbortSignal.any([timeout, stop]) : timeout };
}

/** Waits `ms`; false when `stop` fired first (or had already). */
export async function pause(ms: number, stop?: AbortSignal): Promise<boolean> {
  if (stop?.aborted) return false;
  try {
    await delay(Math.max(0, Math.ceil(ms)), undefined, { signal: stop });
    return true;
  } catch {
    return false;
  }
}

/** `12 ms`, `4.2 s`, `3 min 5 s`, `2 h 10 min`: ages and remaining times, for people. */
export function formatDuration(ms: number): string {
  const value = Math.max(0, Math.round(ms));
  if (value < 1_000) return `${value} ms`;
  if (value < 60_000) return `${(value / 1_000).toFixed(1)} s`;
  const seconds = Math.floor(value / 1_000);
  if (seconds < 3_600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3_600)} h ${Math.floor((seconds % 3_600) / 60)} min`;
}
