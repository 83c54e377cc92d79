// The README's "Testing your app" Jest example, verbatim but for the two import paths
// ('@leaderlease/nestjs' and '@leaderlease/nestjs/testing' in the README) and the
// @jest/globals import that Jest's ESM mode needs (CommonJS Jest has a global `jest`).
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller, type INestApplication, Injectable, Post } from '@nestjs/common';
import { Cron, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import request from 'supertest';
import { type ElectedHookEvent, LeaderOnly, OnElected, OnRevoked } from '../../lib/index.js';
import { LeaderElectionTestingModule, TestingLeadership } from '../../lib/testing.js';

// --- the application code under test ---------------------------------------------------------
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

// --- the tests -----------------------------------------------------------------------------------
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
