import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Controller, Get, Header } from '@nestjs/common';

// A static file, no front-end build: the same path from src/ (run with a TS loader) and dist/.
const PAGE = readFileSync(fileURLToPath(new URL('../src/public/status.html', import.meta.url)), 'utf8');

@Controller()
export class StatusPageController {
  /** The live status page: every election, updated over `GET /leader/events`. */
  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  page(): string {
    return PAGE;
  }
}
