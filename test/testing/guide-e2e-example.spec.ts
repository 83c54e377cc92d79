// The e2e example of docs/guides/testing.md ("An e2e test with the real module": two replicas of
// the real module in one process, one in-memory lease), verbatim but for the import path and the
// reflect-metadata import; ./guide-example.spec.ts holds the guide to everything above the end marker.
import 'reflect-metadata';
import { Controller, type INestApplication, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { InMemoryLeaseStore, LeaderElectionModule, LeaderElectionService, LeaderOnly } from '../../lib/index.js';

@Controller('admin')
class AdminController {
  @Post('reindex')
  @LeaderOnly()
  reindex(): { ok: true } {
    return { ok: true };
  }
}

async function replica(store: InMemoryLeaseStore, identity: string): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      LeaderElectionModule.forRoot({
        store, // shared by the replicas, as a real store would be
        election: 'e2e',
        identity,
        leaseDurationMs: 3_000, // short leases for tests: deadline 2 s, renew every 0.5 s, poll every 0.4 s
        closeStoreOnShutdown: false,
      }),
    ],
    controllers: [AdminController],
  }).compile();
  const app = moduleRef.createNestApplication();
  await app.init();
  return app;
}

it('exactly one replica serves; the other takes over when it shuts down', async () => {
  const store = new InMemoryLeaseStore();
  const a = await replica(store, 'replica-a');
  const b = await replica(store, 'replica-b');
  await request(a.getHttpServer()).post('/admin/reindex').expect(201);
  await request(b.getHttpServer()).post('/admin/reindex').expect(503).expect('X-Leader-Id', 'replica-a');

  await a.close(); // drains running leader-only calls, then releases the lease
  await b.get(LeaderElectionService).waitForLeadership(AbortSignal.timeout(5_000));
  await request(b.getHttpServer()).post('/admin/reindex').expect(201);
  await b.close();
});

// --- end of the guide's example ---
