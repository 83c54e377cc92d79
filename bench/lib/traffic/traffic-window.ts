// One replica's traffic in the measured window: its store calls by class and method, and what its
// counting proxy saw, each round trip put on the store call that sent it. Calls whose lifetimes
// overlap form a cluster, and a message sent during a cluster was sent by one of its calls (the proxy
// is this replica's alone); a message sent while no call was in flight is `background` (a keep-alive
// ping, a connection's setup). Within a cluster the messages are shared out in proportion to what
// each kind of call (class and method) costs (call-costs.ts estimates it from all the window's
// clusters), which matters only where a cluster mixes classes: projection.mjs scales each class by
// its own clock.
import { callCosts } from './call-costs.js';
import { type CallClass, type CallRecord, isRenewal } from './call-log.js';

/** A message of the wire, stamped with performance.now() when the proxy received it. */
export interface StampedMessage {
  at: number;
  label: string;
  request: boolean;
}

export interface WireSource {
  messages(): StampedMessage[];
  /** Totals over every connection so far; undefined where the proxy does not count bytes (HTTP). */
  bytes(): ByteTotals | undefined;
  close(): Promise<void>;
}

export interface ByteTotals {
  connections: number;
  bytesToServer: number;
  bytesToClient: number;
  writesToServer: number;
  writesToClient: number;
}

export interface Window {
  from: number;
  until: number;
}

export type Counts = Record<string, number>;

export interface WindowTraffic {
  /** The window counted: a leader's runs from its first renewal in the measured window to its first after it. */
  span: Window;
  /** Calls started in the window, per class, per method. */
  calls: Partial<Record<CallClass, Counts>>;
  /** The election's own renewals in the window (the leader's clock). */
  renewals: number;
  /** Mean time from call to answer of the election loop's calls in the window (a follower: its polls). */
  leaseCallMs: number;
  /** Per `class/method`: calls of the window that rejected, and that sent no round trip while in flight. */
  failed: Counts;
  silent: Counts;
  /** Per `class/method` that failed: the last rejection's message. */
  failures: Record<string, string>;
  wire: {
    /** Every message with an answer (a round trip) in the window, per label. */
    requests: Counts;
    /** Those sent while no call was in flight. */
    background: Counts;
    /** The others, per `class/method` of the call that sent them (shares of a cluster: fractions), per label. */
    byCall: Record<string, Counts>;
    /** Per `class/method`, per label: the round trips one call sends (estimated, call-costs.ts). */
    costs: Record<string, Counts>;
    /** Round trips sent during clusters that mixed classes (their split is the estimate above). */
    mixed: number;
    /** Messages without an answer (control frames, handshakes, …), per label. */
    unanswered: Counts;
  };
  /** Bytes and reads each way during the measured window; undefined for Azure (counted as HTTP requests). */
  bytes?: ByteTotals;
}

interface Cluster {
  start: number;
  end: number;
  calls: CallRecord[];
  messages: StampedMessage[];
}

const kindOf = (call: CallRecord) => `${call.cls}/${call.method}`;

export function windowTraffic(
  calls: readonly CallRecord[],
  wire: WireSource,
  measured: Window,
  bytes: { atStart?: ByteTotals; atEnd?: ByteTotals },
): WindowTraffic {
  const window = renewalAligned(calls, measured);
  const inWindow = calls.filter((call) => call.start >= window.from && call.start < window.until);
  const byClass: Partial<Record<CallClass, Counts>> = {};
  for (const call of inWindow) add(bucket(byClass, call.cls), call.method, 1);
  const renewals = inWindow.filter((call) => call.cls === 'lease' && isRenewal(call.method)).length;
  const loop = inWindow.filter((call) => call.cls === 'lease' && call.end !== Number.POSITIVE_INFINITY);
  const leaseCallMs = loop.reduce((total, call) => total + call.end - call.start, 0) / (loop.length || 1);

  const clusters: Cluster[] = [];
  for (const call of [...calls].sort((a, b) => a.start - b.start)) {
    const last = clusters.at(-1);
    if (last && call.start <= last.end) {
      last.calls.push(call);
      last.end = Math.max(last.end, call.end);
    } else clusters.push({ start: call.start, end: call.end, calls: [call], messages: [] });
  }
  const requests: Counts = {};
  const background: Counts = {};
  const unanswered: Counts = {};
  const messages = wire
    .messages()
    .filter((m) => m.at >= window.from && m.at < window.until)
    .sort((a, b) => a.at - b.at);
  let c = 0;
  for (const message of messages) {
    if (!message.request) {
      add(unanswered, message.label, 1);
      continue;
    }
    add(requests, message.label, 1);
    while (c < clusters.length && (clusters[c] as Cluster).end < message.at) c += 1;
    const cluster = clusters[c];
    if (cluster && cluster.start <= message.at) cluster.messages.push(message);
    else add(background, message.label, 1);
  }

  const costs = callCosts(
    clusters
      .filter((cluster) => cluster.start >= window.from && cluster.end <= window.until)
      .map((cluster) => {
        const kinds: Counts = {};
        for (const call of cluster.calls) add(kinds, kindOf(call), 1);
        const sent: Counts = {};
        for (const message of cluster.messages) add(sent, message.label, 1);
        return { kinds, messages: sent };
      }),
  );
  const byCall: Record<string, Counts> = {};
  let mixed = 0;
  for (const cluster of clusters) {
    if (cluster.messages.length === 0) continue;
    if (new Set(cluster.calls.map((call) => call.cls)).size > 1) mixed += cluster.messages.length;
    for (const message of cluster.messages) {
      const weights = cluster.calls.map((call) => costs[kindOf(call)]?.[message.label] ?? 0);
      const total = weights.reduce((a, b) => a + b, 0);
      cluster.calls.forEach((call, i) => {
        const share = total > 0 ? (weights[i] as number) / total : 1 / cluster.calls.length;
        if (share > 0) add(bucket(byCall, kindOf(call)), message.label, share);
      });
    }
  }
  const failed: Counts = {};
  const silent: Counts = {};
  const failures: Record<string, string> = {};
  for (const call of inWindow) {
    if (call.failed !== undefined) {
      add(failed, kindOf(call), 1);
      failures[kindOf(call)] = call.failed.slice(0, 300);
    }
    if (call.end <= window.until && !messages.some((m) => m.request && call.start <= m.at && m.at <= call.end)) {
      add(silent, kindOf(call), 1);
    }
  }
  return {
    span: window,
    calls: byClass,
    renewals,
    leaseCallMs,
    failed,
    silent,
    failures,
    wire: { requests, background, byCall, costs, mixed, unanswered },
    ...(bytes.atEnd ? { bytes: difference(bytes.atEnd, bytes.atStart) } : {}),
  };
}

/**
 * A leader's window, from its first renewal in `window` to its first renewal after it, so it holds
 * whole renewal cycles (the reads after the last renewal of the window included, none before the
 * first); anyone else's: `window`.
 */
function renewalAligned(calls: readonly CallRecord[], window: Window): Window {
  const renewals = calls
    .filter((call) => call.cls === 'lease' && isRenewal(call.method) && call.start >= window.from)
    .map((call) => call.start)
    .sort((a, b) => a - b);
  const from = renewals[0];
  const until = renewals.find((start) => start >= window.until);
  return from !== undefined && until !== undefined ? { from, until } : window;
}

/** The counts of `key` in `map`, created empty when missing. */
function bucket<K extends string>(map: Partial<Record<K, Counts>>, key: K): Counts {
  const existing = map[key];
  if (existing) return existing;
  const created: Counts = {};
  map[key] = created;
  return created;
}

function add(counts: Counts, key: string, by: number): void {
  counts[key] = (counts[key] ?? 0) + by;
}

function difference(end: ByteTotals, start: ByteTotals | undefined): ByteTotals {
  const before = start ?? { connections: 0, bytesToServer: 0, bytesToClient: 0, writesToServer: 0, writesToClient: 0 };
  return {
    connections: end.connections,
    bytesToServer: end.bytesToServer - before.bytesToServer,
    bytesToClient: end.bytesToClient - before.bytesToClient,
    writesToServer: end.writesToServer - before.writesToServer,
    writesToClient: end.writesToClient - before.writesToClient,
  };
}
