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
  /** @type {string} */
  const election = fields.election ?? options.elections[0];
  switch (event) {
    case 'listening':
      instance.up = true;
      out(`up on http://localhost:${fields.port} (pid ${instance.pid})`);
      maybeIntroduce(cluster);
      break;
    case 'elected': {
      const loss = state.lastLoss.get(election);
      let takeover = '';
      if (loss && loss.from !== instance.name) {
        takeover = `, took over from ${loss.from} ${seconds(Date.now() - loss.at)} after it ${loss.how}`;
      }
      state.leaders.set(election, { instance, term: fields.term });
      state.lastLoss.delete(election);
      out(style.leader(`★ elected leader of ${election}, term ${fields.term}${takeover}`));
      showSpread(cluster);
      break;
    }
    case 'revoked':
      if (state.leaders.get(election)?.instance === instance) {
        state.leaders.delete(election);
        state.lastLoss.set(election, { from: instance.name, at: Date.now(), how: lossHow(fields.reason) });
      }
      out(style.yellow(`✗ no longer leader of ${election} (term ${fields.term}): ${fields.reason}`));
      break;
    case 'leader-changed':
      // "No known leader" mostly comes from the leader itself as it stops: noise, unless asked for.
      if (fields.leaderId) out(style.dim(`follows ${fields.leaderId} for ${election}`));
      else if (options.verbose) out(style.dim(`sees no leader for ${election}`));
      break;
    case 'job':
      out(
        `⚙ ${election}: ${fields.trigger === 'http' ? 'POST /jobs/run-now' : 'cron job'} ran: ${jobWork(fields)}, fencing term ${fields.term}`,
      );
      break;
    case 'job-aborted':
      out(style.yellow(`⚙ ${election}: report #${fields.report} abandoned: term ${fields.term} ended mid-work`));
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
 * What a job's line says it did (the sample app's three jobs; see sample-app/src/*.service.ts).
 * @param {Record<string, any>} fields
 */
function jobWork(fields) {
  if (fields.job === 'report') return `report #${fields.report}`;
  if (fields.job === 'billing') return 'invoices closed';
  if (fields.job === 'cleanup') return 'sessions swept';
  return String(fields.job);
}

/** @param {string} reason */
function lossHow(reason) {
  if (reason === 'stopped') return 'shut down';
  if (reason === 'resigned') return 'resigned';
  if (reason.startsWith('handed over')) return 'handed it over';
  return `lost it (${reason})`;
}

/**
 * Once every election has a leader and spread has evened them out, one line: who leads what.
 * Printed again whenever that settles on a different assignment (a handover, a crash).
 * @param {Cluster} cluster
 */
function showSpread(cluster) {
  const { state, options } = cluster;
  if (!cluster.balanced()) return;
  const assignment = options.elections
    .map((election) => `${election} → ${state.leaders.get(election)?.instance.name}`)
    .join(', ');
  if (assignment === state.shownSpread) return;
  const first = state.shownSpread === undefined;
  state.shownSpread = assignment;
  const since = state.startedAt === undefined ? '' : `, ${seconds(Date.now() - state.startedAt)} after the start`;
  say('demo', style.bold(`leaders: ${assignment}${first ? ` (spread${since})` : ''}`));
  cluster.bus.emit('balanced', assignment);
  if (state.introduced && !options.tour) hint(cluster);
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
    `${options.instanceCount} instances compete for ${options.elections.length} lease blob(s) in ${state.azurite ? 'Azurite' : 'your storage account'} (${options.elections.join(', ')}):`,
    `lease ${LEASE_S} s, renewed every 2.5 s, followers retry every ~${RETRY_S} s. Spread evens the elections out`,
    `(an instance leading 2 fewer than another asks it for one). Each election's leader alone runs its cron job;`,
    `the leader of ${options.elections[0]} (the default election) also runs the report job's queue worker.`,
    '',
    `  open http://localhost:${first}/                    live status page (any instance; kill -9 the leader and watch)`,
    `  curl -s localhost:${first}/leader                 who leads, which term (any instance)`,
    `  curl -s localhost:${first}/metrics                Prometheus metrics (OpenTelemetry)`,
    `  curl -s localhost:${first}/health                 terminus health with the leader indicator`,
    `  curl -s -XPOST localhost:${first}/jobs/run-now    200 on the leader of ${options.elections[0]}, 503 + X-Leader-Id elsewhere`,
    `  curl -s -XPOST localhost:${first}/leader/handover -H 'content-type: application/json' \\`,
    `       -d '{"election":"${options.elections[1] ?? options.elections[0]}","to":"${instances[0].name}"}'   hand an election over (any instance)`,
    '',
    options.tour
      ? `The tour now hands ${options.elections[1]} over to a named instance, crashes the leader of ${options.elections[0]},\nthen stops its successor, and measures the handover and both takeovers.`
      : `Crash a leader with kill -9 <pid>: a follower takes over once the lease expires (${CRASH_EXPECTED}).\nStop it gracefully with kill <pid>: it releases its leases, a follower takes over in ${GRACEFUL_EXPECTED}.\nCtrl+C stops everything.`,
    rule(),
  ];
  for (const line of lines.join('\n').split('\n')) console.log(line);
  // Spread may have settled before the last instance listened: then only the hint is missing.
  if (state.shownSpread === undefined) showSpread(cluster);
  else if (!options.tour) hint(cluster);
}

/** @param {Cluster} cluster */
function hint(cluster) {
  const leader = cluster.state.leaders.get(cluster.options.elections[0]);
  if (!leader) return;
  const { instance } = leader;
  say(
    'demo',
    style.dim(
      `${instance.name} leads ${cluster.ledBy(instance).join(', ')}: kill -9 ${instance.pid} to crash it, kill ${instance.pid} to stop it gracefully`,
    ),
  );
}
