// @ts-check
// One replica using the `etcd3` package's own Election (the peer for the side-by-side figures),
// written the way its documentation shows: campaign(), act on 'elected', stop on 'error' and
// campaign again after RETRY_MS. SIGTERM resigns (so the next candidate is elected at once) and exits.
//
//   ETCD_ENDPOINT=http://127.0.0.1:2379 ELECTION=e IDENTITY=a LEASE_MS=15000 RETRY_MS=2000 TICK_MS=20 \
//     node bench/apps/peer-etcd3.mjs
//
// stdout `@@b {json}` lines, as bench/apps/replica.ts: ready, elected, revoked, act, believes,
// believes-true (after a pause), resumed. End of stdin → exit (no orphans).
import { Etcd3 } from 'etcd3';
import { emitter, env } from './peer-protocol.mjs';

const identity = env('IDENTITY');
const TICK_MS = Number(env('TICK_MS', '20'));
const RETRY_MS = Number(env('RETRY_MS', '2000'));
const TTL_S = Math.round(Number(env('LEASE_MS', '15000')) / 1000);
const RESUME_WINDOW_MS = 3_000;
const emit = emitter(identity);

const client = new Etcd3({ hosts: env('ETCD_ENDPOINT') });
const election = client.election(env('ELECTION'), TTL_S);

let leading = false;
/** @type {ReturnType<typeof election.campaign> | undefined} */
let campaign;
let stopping = false;
let actsInTerm = 0;

function run() {
  if (stopping) return;
  const current = election.campaign(identity);
  campaign = current;
  // Internal event of etcd3 (used by its own tests): the campaign key is in place and waits for
  // the older candidates' keys to go. From then on this replica is a standing follower.
  current.once('_isWaiting', () => announce());
  current.on('elected', () => {
    if (campaign !== current) return;
    leading = true;
    actsInTerm = 0;
    emit({ type: 'elected' });
    announce();
  });
  current.on('error', (error) => {
    if (campaign !== current) return;
    if (leading) emit({ type: 'revoked', reason: error?.constructor?.name ?? String(error), acts: actsInTerm });
    leading = false;
    campaign = undefined;
    setTimeout(run, RETRY_MS);
  });
}

let announced = false;
function announce() {
  if (announced) return;
  announced = true;
  emit({ type: 'ready', leader: leading });
}

run();

let believed = false;
let last = performance.now();
let resumedAt = Number.NEGATIVE_INFINITY;
setInterval(() => {
  const now = performance.now();
  if (now - last > 1_000) {
    resumedAt = now;
    emit({ type: 'resumed', gapMs: Math.round(now - last) });
  }
  last = now;
  const recent = now - resumedAt < RESUME_WINDOW_MS;
  if (leading !== believed) emit({ type: 'believes', value: leading });
  else if (leading && recent) emit({ type: 'believes-true' });
  believed = leading;
  if (leading) {
    actsInTerm += 1;
    if (actsInTerm === 1 || recent) emit({ type: 'act' });
  }
}, TICK_MS);

process.on('SIGTERM', async () => {
  stopping = true;
  const current = campaign;
  leading = false;
  try {
    await current?.resign();
  } finally {
    client.close();
    process.exit(0);
  }
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
