import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
@Injectable() class A { x = 1; }
@Injectable() class B { constructor(readonly a: A) {} }
@Module({ providers: [A, B] }) class M {}
it('di works', async () => {
  const m = await Test.createTestingModule({ imports: [M] }).compile();
  expect(m.get(B).a.x).toBe(1);
});
