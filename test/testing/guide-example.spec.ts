// The Jest example of docs/guides/testing.md ("A unit test with Jest"), verbatim but for the two
// import paths ('@leaderlease/nestjs' and '@leaderlease/nestjs/testing' in the guide), the
// @jest/globals import that Jest's ESM mode needs (CommonJS Jest has a global `jest`) and the
// reflect-metadata import. The last test holds the guide to everything above its end marker.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller, type INestApplication, Injectable, Post } from '@nestjs/common';
import { Cron, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import request from 'supertest';
import { type ElectedHookEvent, LeaderOnly, OnElected, OnRevoked } from '../../lib/index.js';
import { LeaderElectionTestingModule, TestingLeadership } from '../../lib/testing.js';

// --- the application code under test (normally imported from src/, inlined here) ---
abstract class Ledger {
  abstract closeBooks(): Promise<void>;
}

@Injectable()
class BillingJobs {
  pumping = false;
  constructor(private readonly ledger: Ledger) {}

  @Cron('0 0 * * * *', { name: 'close-books' })
  @LeaderOnly()
  async closeBooks(): Promise<void> {
    await this.ledger.closeBooks();
  }

  @OnElected()
  startPump({ signal }: ElectedHookEvent): void {
    this.pumping = true;
    signal.addEventListener('abort', () => (this.pumping = false));
  }

  @OnRevoked()
  stopped(): void {}
}

@Controller('admin')
class AdminController {
  @Post('reindex')
  @LeaderOnly()
  reindex(): { ok: true } {
    return { ok: true };
  }
}

// --- the tests ---
describe('BillingJobs', () => {
  let moduleRef: TestingModule;
  let leadership: TestingLeadership;
  const ledger = { closeBooks: jest.fn(async () => undefined) };

  beforeEach(async () => {
    ledger.closeBooks.mockClear();
    moduleRef = await Test.createTestingModule({
      imports: [ScheduleModule.forRoot(), LeaderElectionTestingModule.forRoot({ leader: true })],
      providers: [BillingJobs, { provide: Ledger, useValue: ledger }],
    }).compile();
    await moduleRef.init(); // starts the (testing) election and binds @LeaderOnly methods
    leadership = moduleRef.get(TestingLeadership);
  });

  afterEach(() => moduleRef.close());

  it('closes the books on the leader only', async () => {
    const cron = moduleRef.get(SchedulerRegistry).getCronJob('close-books');
    await cron.fireOnTick();
    expect(ledger.closeBooks).toHaveBeenCalledTimes(1);

    await leadership.setLeader('replica-b'); // another replica leads now
    await cron.fireOnTick();
    expect(ledger.closeBooks).toHaveBeenCalledTimes(1); // skipped on a follower
  });

  it('runs the pump for exactly the term', async () => {
    const jobs = moduleRef.get(BillingJobs);
    expect(jobs.pumping).toBe(true);
    await leadership.revoke();
    expect(jobs.pumping).toBe(false);
    await leadership.elect();
    expect(jobs.pumping).toBe(true);
  });

  it('an instance made with new must be bound first', async () => {
    const jobs = new BillingJobs(ledger);
    await expect(jobs.closeBooks()).rejects.toThrow(/not bound/);
    await leadership.bind(jobs).closeBooks();
    expect(ledger.closeBooks).toHaveBeenCalledTimes(1);
  });
});

describe('AdminController (HTTP)', () => {
  let app: INestApplication;

  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [LeaderElectionTestingModule.forRoot({ leader: false })],
      controllers: [AdminController],
    }).compile();
    app = moduleRef.createNestApplication();
    await app.init();
  });

  afterEach(() => app.close());

  it('answers 503 on a follower and 201 on the leader', async () => {
    await app.get(TestingLeadership).setLeader('replica-b');
    await request(app.getHttpServer())
      .post('/admin/reindex')
      .expect(503)
      .expect('X-Leader-Id', 'replica-b')
      .expect('Retry-After', '2');

    await app.get(TestingLeadership).elect();
    await request(app.getHttpServer()).post('/admin/reindex').expect(201, { ok: true });
  });
});

// --- end of the guide's example ---

// The guide prints both examples (this one and ./guide-e2e-example.spec.ts) as a user writes them.
import { readFileSync } from 'node:fs';

const END = "\n// --- end of the guide's example ---";

/** A spec's example as docs/guides/testing.md prints it: the part above END, without the header comment and the test-only imports, with the package's own import paths. */
function printed(spec: URL, firstLine: string): string {
  const source = readFileSync(spec, 'utf8');
  const example = source
    .slice(0, source.indexOf(END))
    .replace(/^(\/\/.*\n)+/, '')
    .replace("import 'reflect-metadata';\n", '')
    .replace("import { jest } from '@jest/globals';\n", '')
    .replaceAll("'../../lib/index.js'", "'@leaderlease/nestjs'")
    .replaceAll("'../../lib/testing.js'", "'@leaderlease/nestjs/testing'");
  return `${firstLine}\n${example.trimEnd()}\n`;
}

it("docs/guides/testing.md prints both examples verbatim (but for what the spec's header names)", () => {
  const guide = readFileSync(new URL('../../docs/guides/testing.md', import.meta.url), 'utf8');
  const blocks = [...guide.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);
  const jestBlock = blocks.find((block) => block.startsWith('// billing.jobs.spec.ts\n') && block.includes('jest.fn('));
  expect(jestBlock).toBe(printed(new URL(import.meta.url), '// billing.jobs.spec.ts'));
  const e2e = blocks.find((block) => block.startsWith('// leadership.e2e-spec.ts\n'));
  expect(e2e).toBe(printed(new URL('./guide-e2e-example.spec.ts', import.meta.url), '// leadership.e2e-spec.ts'));
});
