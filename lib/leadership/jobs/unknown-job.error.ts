/**
 * `pauseJob`, `resumeJob`, `runJobNow` or `jobHistory` named a job this replica does not run: no
 * scheduled `@LeaderOnly` method of that name (its `@Cron`/`@Interval`/`@Timeout` name, else
 * `Class.method`) in that election. Checked against this replica's own jobs, before anything is
 * written, so a typo never queues a command no leader would apply. Map it to 404 in an HTTP API.
 */
export class UnknownJobError extends Error {
  constructor(
    /** The name asked for. */
    readonly job: string,
    /** The election it was looked for in; undefined when every election was searched. */
    readonly election: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'UnknownJobError';
  }
}
