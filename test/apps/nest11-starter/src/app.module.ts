import { LeaderElectionModule } from '@leaderlease/nestjs';
import { PostgresLeaseStore } from '@leaderlease/nestjs/postgres';
import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { AppController } from './app.controller';
import { JobsService } from './jobs.service';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    LeaderElectionModule.forRoot({
      store: new PostgresLeaseStore({
        connection: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
        table: process.env.LEASE_TABLE,
      }),
      election: 'jobs',
      identity: process.env.REPLICA_ID,
      // Short timings so the matrix sees a leader within a second or two.
      leaseDurationMs: 3000,
      renewDeadlineMs: 2000,
      renewIntervalMs: 500,
      retryIntervalMs: 500,
    }),
  ],
  controllers: [AppController],
  providers: [JobsService],
})
export class AppModule {}
