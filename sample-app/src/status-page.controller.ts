import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Controller, Get, Header } from '@nestjs/common';

// Static files, no front-end build: the same path from src/ (run with a TS loader) and dist/.
const publicFile = (name: string) =>
  readFileSync(fileURLToPath(new URL(`../src/public/${name}`, import.meta.url)), 'utf8');
const PAGE = publicFile('status.html');
const JOBS_SCRIPT = publicFile('jobs.js');

@Controller()
export class StatusPageController {
  /** The live status page: every election, updated over `GET /leader/events`, and its jobs. */
  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  page(): string {
    return PAGE;
  }

  /** The page's jobs table (its own file: the page's leadership part stays readable on its own). */
  @Get('status/jobs.js')
  @Header('Content-Type', 'text/javascript; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  jobsScript(): string {
    return JOBS_SCRIPT;
  }
}
