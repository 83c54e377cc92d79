// The dual-package hazard, measured on the installed tarball (run by scripts/test-apps.mjs).
// This file is ESM, so `import` loads dist/esm; `require` (standing for a CommonJS dependency of
// the app) loads dist/commonjs: two copies of the package in one process, one Nest 11 (CommonJS,
// so a single copy of Nest). Plain JavaScript: decorators are applied as functions.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import * as esm from '@leaderlease/nestjs';
import { Controller, Injectable, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

const cjs = createRequire(import.meta.url)('@leaderlease/nestjs');
const electionModule = () =>
  esm.LeaderElectionModule.forRoot({ store: new esm.InMemoryLeaseStore(), election: 'dual' });

function leaderOnly(copy, prototype, name) {
  const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
  Object.defineProperty(prototype, name, copy.LeaderOnly()(prototype, name, descriptor) ?? descriptor);
}

// 1. Two copies: every class (and so every class-based DI token) exists twice.
assert.notEqual(esm.LeaderElectionService, cjs.LeaderElectionService);
assert.notEqual(esm.LeaderOnlyGuard, cjs.LeaderOnlyGuard);

// 2. A job decorated by the CommonJS copy, in an app whose module comes from the ESM copy: it must
//    run on the leader. Before both copies shared the guard's service token and the instance
//    binding key (Symbol.for), this app did not boot (the other copy's guard could not be injected)
//    and, past that, the job would have been skipped with an "unbound instance" warning.
class LibraryJobs {
  runs = 0;
  tick() {
    this.runs++;
  }
}
leaderOnly(cjs, LibraryJobs.prototype, 'tick');
Injectable()(LibraryJobs);
class JobsApp {}
Module({ imports: [electionModule()], providers: [LibraryJobs] })(JobsApp);
const app = await NestFactory.createApplicationContext(JobsApp, { logger: ['error', 'warn'] });
await app.get(esm.LeaderElectionService).waitForLeadership();
const jobs = app.get(LibraryJobs);
await jobs.tick();
assert.equal(jobs.runs, 1, 'a @LeaderOnly job decorated by the CommonJS copy did not run on the leader');
await app.close();

// 3. Injecting the other copy's LeaderElectionService fails at bootstrap, loudly (not at run time).
class NeedsCjsService {}
Injectable()(NeedsCjsService);
Reflect.defineMetadata('design:paramtypes', [cjs.LeaderElectionService], NeedsCjsService);
class ServiceApp {}
Module({ imports: [electionModule()], providers: [NeedsCjsService] })(ServiceApp);
await assert.rejects(
  NestFactory.createApplicationContext(ServiceApp, { abortOnError: false, logger: false }),
  /can't resolve dependencies of the NeedsCjsService/,
);

// 4. A @LeaderOnly route decorated by the CommonJS copy: its guard (that copy's class) finds the
//    app's service through the string token both copies share, and lets the leader through.
class CjsController {
  reindex() {
    return 'reindexed';
  }
}
leaderOnly(cjs, CjsController.prototype, 'reindex');
Post('reindex')(
  CjsController.prototype,
  'reindex',
  Object.getOwnPropertyDescriptor(CjsController.prototype, 'reindex'),
);
Controller('admin')(CjsController);
class RouteApp {}
Module({ imports: [electionModule()], controllers: [CjsController] })(RouteApp);
const web = await NestFactory.create(RouteApp, { logger: ['error', 'warn'] });
await web.listen(0, '127.0.0.1');
await web.get(esm.LeaderElectionService).waitForLeadership();
const response = await fetch(`${await web.getUrl()}/admin/reindex`, { method: 'POST' });
assert.equal(response.status, 201, `the other copy's @LeaderOnly route answered ${response.status} on the leader`);
assert.equal(await response.text(), 'reindexed');
await web.close();

console.log(
  'dual-package: two copies load; a job and a route decorated by the CommonJS copy work under the ESM module; ' +
    "injecting the other copy's LeaderElectionService class fails at bootstrap",
);
