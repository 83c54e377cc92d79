// @ts-check
// The story the demo tells: one line per instance event that matters (elections, terms, which
// instance ran the cron job, revocations and takeovers), and what to try once everyone is up.
import { rule, say, seconds, style } from './output.mjs';
import { CRASH_EXPECTED, GRACEFUL_EXPECTED, LEASE_S, RETRY_S } from './timings.mjs';

/** @typedef {import('./cluster.mjs').Cluster} Cluster */
/** @typedef {import('./cluster.mjs').Instance} Instance */

/**
 * @param {Cluster} cluster
 * @param {Instance} instance
 * @param {string} event
 * @param {Record<string, any>} fields
 */
export function onEvent(cluster, instance, event, fields) {
  const { state, options } = cluster;
  /** @param {string} line */
  const out = (line) => say(instance.name, line, instance.color);
  switch (event) {
    case 'listening':
      instance.up = true;
      out(`up on http://localhost:${fields.port} (pid ${instance.pid})`);
      maybeIntroduce(cluster);
      break;
    case 'elected': {
      const loss = state.lastLoss;
      let takeover = '';
      if (loss && loss.from !== instance.name) {
        takeover = `, took over from ${loss.from} ${seconds(Date.now() - loss.at)} after it ${loss.how}`;
      }
      state.leader = { instance, term: fields.term };
      state.lastLoss = undefined;
      out(style.leader(`★ elected leader, term ${fields.term}${takeover}`));
      if (state.introduced && !options.tour) hint(cluster);
      break;
    }
    case 'revoked':
      if (state.leader?.instance === instance) {
        state.leader = undefined;
        const how =
          fields.reason === 'stopped'
            ? 'shut down'
            : fields.reason === 'resigned'
              ? 'resigned'
              : `lost it (${fields.reason})`;
        state.lastLoss = { from: instance.name, at: Date.now(), how };
      }
      out(style.yellow(`✗ no longer leader (term ${fields.term}): ${fields.reason}`));
      break;
    case 'leader-changed':
      // "No known leader" mostly comes from the leader itself as it stops: noise, unless asked for.
      if (fields.leaderId) out(style.dim(`follows ${fields.leaderId}`));
      else if (options.verbose) out(style.dim('sees no leader'));
      break;
    case 'job':
      out(
        fields.trigger === 'http'
          ? `⚙ POST /jobs/run-now ran: report #${fields.report}, fencing term ${fields.term}`
          : `⚙ cron job ran: report #${fields.report}, fencing term ${fields.term}`,
      );
      break;
    case 'job-aborted':
      out(style.yellow(`⚙ report #${fields.report} abandoned: term ${fields.term} ended mid-work`));
      break;
    case 'worker-started':
      out(style.dim(`queue worker started (term ${fields.term})`));
      break;
    case 'worker-stopped':
      out(style.dim(`queue worker stopped after ${fields.processed} items (term ${fields.term} ended)`));
      break;
    case 'stopped':
      out(`shut down cleanly${fields.signal ? ` on ${fields.signal}` : ''}`);
      break;
    default:
      if (options.verbose) out(style.dim(`${event} ${JSON.stringify(fields)}`));
  }
}

/**
 * Once every instance is up: what to try.
 * @param {Cluster} cluster
 */
function maybeIntroduce(cluster) {
  const { state, options, instances } = cluster;
  if (state.introduced || !instances.every((i) => i.up)) return;
  state.introduced = true;
  const first = instances[0].port;
  const lines = [
    rule(),
    `${options.instanceCount} instances compete for one lease blob in ${state.azurite ? 'Azurite' : 'your storage account'}: lease ${LEASE_S} s, renewed every 2.5 s,`,
    `followers retry every ~${RETRY_S} s. Only the leader runs the cron job (every 5 s) and its queue worker.`,
    '',
    `  open http://localhost:${first}/                    live status page (any instance; kill -9 the leader and watch)`,
    `  curl -s localhost:${first}/leader                 who leads, which term (any instance)`,
    `  curl -s localhost:${first}/metrics                Prometheus metrics (OpenTelemetry)`,
    `  curl -s localhost:${first}/health                 terminus health with the leader indicator`,
    `  curl -s -XPOST localhost:${first}/jobs/run-now    200 on the leader, 503 + X-Leader-Id elsewhere`,
    '',
    options.tour
      ? 'The tour now crashes the leader, then stops its successor, and measures both takeovers.'
      : `Crash the leader with kill -9 <pid>: a follower takes over once the lease expires (${CRASH_EXPECTED}).\nStop it gracefully with kill <pid>: it releases the lease, a follower takes over in ${GRACEFUL_EXPECTED}.\nCtrl+C stops everything.`,
    rule(),
  ];
  for (const line of lines.join('\n').split('\n')) console.log(line);
  if (state.leader && !options.tour) hint(cluster);
}

/** @param {Cluster} cluster */
function hint(cluster) {
  const leader = cluster.state.leader;
  if (!leader) return;
  const { instance } = leader;
  say(
    'demo',
    style.dim(
      `leader is ${instance.name}: kill -9 ${instance.pid} to crash it, kill ${instance.pid} to stop it gracefully`,
    ),
  );
}
