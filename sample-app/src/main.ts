import { ConsoleLogger, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { httpPort } from './config.js';
import { jsonLogs, logEvent } from './log-event.js';
import { startTelemetry } from './telemetry.js';

async function bootstrap(): Promise<void> {
  // Before the app: the library takes its meter from the global provider when its module starts.
  startTelemetry();
  const app = await NestFactory.create(AppModule, {
    logger: jsonLogs ? new ConsoleLogger({ json: true }) : undefined,
  });
  // On SIGTERM/SIGINT Nest runs the shutdown hooks: the leader stops starting leader-only work,
  // waits for what runs, then releases its lease so a follower takes over within ~2 s instead of
  // waiting for the lease to expire. The library registers no signal handlers of its own.
  app.enableShutdownHooks();
  const port = httpPort();
  await app.listen(port);
  logEvent(
    new Logger('Main'),
    'listening',
    { port, pid: process.pid },
    `listening on http://localhost:${port} (pid ${process.pid})`,
  );
}

void bootstrap();
