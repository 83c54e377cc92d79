// Which Nest the suite runs against: 12 from the root, 11 under test/nest11/run.mjs (which sets
// EXPECT_NEST_MAJOR). Guards the Nest 11 run against silently testing the root's copies.
import { HttpException } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

it('runs against the expected Nest major', async () => {
  const expected = Number(process.env.EXPECT_NEST_MAJOR ?? 12);
  const { default: core } = await import('@nestjs/core/package.json', { with: { type: 'json' } });
  const { default: common } = await import('@nestjs/common/package.json', { with: { type: 'json' } });
  expect([Number(core.version.split('.')[0]), Number(common.version.split('.')[0])]).toEqual([expected, expected]);
  expect(typeof NestFactory.create).toBe('function');
  expect(new HttpException('x', 503).getStatus()).toBe(503);
});
