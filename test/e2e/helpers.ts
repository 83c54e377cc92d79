import 'reflect-metadata';
import type { DynamicModule, INestApplication, LoggerService, ModuleMetadata } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import type { LeaderElectionModuleOptions } from '../../lib/nest/interfaces/leader-election-options.interface.js';
import { LeaderElectionModule } from '../../lib/nest/leader-election.module.js';
import { LeaderElectionService } from '../../lib/nest/leader-election.service.js';
import type { CallOptions, Lease } from '../../lib/stores/lease-store.js';
import { InMemoryLeaseStore } from '../../lib/stores/memory/memory.store.js';

/**
 * Short leases for in-process tests: renew deadline 2000, renew every 500, retry every 400 ms
 * (the elector scales them from the lease). Long enough that a loaded 2-core machine does not
 * lose leadership by accident, short enough for quick handovers.
 */
export const LEASE_MS = 3_000;
export const RETRY_MS = 400;
/** Slack on top of any expected delay: the machine is loaded, bounds are generous on purpose. */
export const SLACK_MS = 1_500;

/** An in-memory store that also timestamps every release, to check shutdown ordering. */
export class RecordingStore extends InMemoryLeaseStore {
  readonly releases: Array<{ holder: string; term: number; at: number }> = [];

  override async release(lease: Lease, options: CallOptions): Promise<void> {
    await super.release(lease, options);
    this.releases.push({ holder: lease.holder, term: lease.term, at: Date.now() });
  }
}

/** Collects log lines of every app of a spec file (Nest's static Logger is process-wide anyway). */
export class CaptureLogger implements LoggerService {
  readonly lines: Array<{ level: string; message: string }> = [];
  log(message: unknown): void {
    this.push('log', message);
  }
  error(message: unknown): void {
    this.push('error', message);
  }
  warn(message: unknown): void {
    this.push('warn', message);
  }
  debug(message: unknown): void {
    this.push('debug', message);
  }
  verbose(message: unknown): void {
    this.push('verbose', message);
  }
  matching(level: string, pattern: RegExp): string[] {
    return this.lines.filter((l) => l.level === level && pattern.test(l.message)).map((l) => l.message);
  }
  private push(level: string, message: unknown): void {
    this.lines.push({ level, message: message instanceof Error ? message.message : String(message) });
  }
}

export interface AppSpec extends Pick<ModuleMetadata, 'controllers' | 'providers' | 'imports'> {
  election?: Partial<LeaderElectionModuleOptions> & Pick<LeaderElectionModuleOptions, 'store'>;
  /** Replace the LeaderElectionModule import entirely (forRootAsync tests). */
  electionModule?: DynamicModule;
  schedule?: boolean;
  logger?: LoggerService | false;
}

/** A real Nest HTTP application (Express), initialised but not listening: supertest binds it. */
export async function createApp(spec: AppSpec): Promise<INestApplication> {
  const electionModule =
    spec.electionModule ??
    LeaderElectionModule.forRoot({
      election: 'e2e',
      leaseDurationMs: LEASE_MS,
      closeStoreOnShutdown: false,
      ...spec.election,
    } as LeaderElectionModuleOptions);
  const moduleRef = await Test.createTestingModule({
    imports: [...(spec.schedule === false ? [] : [ScheduleModule.forRoot()]), electionModule, ...(spec.imports ?? [])],
    controllers: spec.controllers ?? [],
    providers: spec.providers ?? [],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: spec.logger ?? false });
  await app.init();
  return app;
}

export function electionOf(app: INestApplication): LeaderElectionService {
  return app.get(LeaderElectionService);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until `predicate` holds; fails with `what` after `timeoutMs`. Resolves with the elapsed ms. */
export async function waitFor(
  what: string,
  predicate: () => boolean,
  timeoutMs = 10_000,
  everyMs = 10,
): Promise<number> {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
  return Date.now() - start;
}

/** Closes apps that are still open (afterEach), ignoring ones already closed. */
export async function closeAll(apps: INestApplication[]): Promise<void> {
  await Promise.all(apps.splice(0).map((app) => app.close().catch(() => undefined)));
}
