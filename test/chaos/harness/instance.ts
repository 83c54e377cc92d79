// One fixture process of a chaos scenario and its fault proxy: its output, `@@fx` events, signals.
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { FaultProxy } from '../../support/fault-proxy.js';
import type { ContentionWindow } from '../../support/ledger.js';
import { T } from './bounds.js';

interface FxEvent {
  type: string;
  id: string;
  at: number;
  [key: string]: unknown;
}

export interface OutputLine {
  stream: 'stdout' | 'stderr';
  at: number;
  text: string;
}

/** One fixture process and its fault proxy. */
export class Instance {
  readonly output: OutputLine[] = [];
  readonly events: FxEvent[] = [];
  readonly signals: Array<{ signal: NodeJS.Signals | 'close'; at: number }> = [];
  exit?: { code: number | null; signal: NodeJS.Signals | null; at: number };
  readonly exited: Promise<void>;
  readonly spawnedAt = Date.now();

  constructor(
    readonly id: string,
    readonly child: ChildProcessWithoutNullStreams,
    readonly proxy: FaultProxy | undefined,
    /** Its timing, for the independent ledger. */
    readonly renewDeadlineMs: number = T.renewDeadlineMs,
  ) {
    const collect = (stream: OutputLine['stream']) => (text: string) => {
      this.output.push({ stream, at: Date.now(), text });
      if (stream === 'stdout' && text.startsWith('@@fx ')) {
        try {
          this.events.push(JSON.parse(text.slice(5)) as FxEvent);
        } catch {
          // a torn line: kept in `output` anyway
        }
      }
    };
    createInterface({ input: child.stdout }).on('line', collect('stdout'));
    createInterface({ input: child.stderr }).on('line', collect('stderr'));
    child.stdin.on('error', () => undefined);
    // 'close' (not 'exit'): the process has ended and all its output has been read.
    this.exited = new Promise((resolve) =>
      child.once('close', (code, signal) => {
        this.exit = { code, signal, at: Date.now() };
        resolve();
      }),
    );
  }

  event(type: string): FxEvent | undefined {
    return this.events.find((e) => e.type === type);
  }

  get port(): number | undefined {
    return this.event('ready')?.port as number | undefined;
  }

  get alive(): boolean {
    return this.exit === undefined;
  }

  /** Stopped by SIGSTOP and not continued since. */
  get paused(): boolean {
    const last = this.signals.filter((s) => s.signal === 'SIGSTOP' || s.signal === 'SIGCONT').at(-1);
    return last?.signal === 'SIGSTOP';
  }

  signal(signal: NodeJS.Signals): number {
    const at = Date.now();
    this.signals.push({ signal, at });
    this.child.kill(signal);
    return at;
  }

  /**
   * SIGSTOP, then wait until the kernel shows the process stopped. `sentAt` is when the signal was
   * sent (failover is measured from it); `frozenAt` is a moment the process was certainly stopped:
   * a ledger stamp taken before the stop is ≤ `frozenAt`, so anything stamped later was done after
   * a resume. (Between `sentAt` and delivery the child still runs and may stamp the same
   * millisecond, or the next: about 1 run in 10 with a 5 ms stamper.)
   */
  async freeze(): Promise<{ sentAt: number; frozenAt: number }> {
    const sentAt = this.signal('SIGSTOP');
    const until = Date.now() + 5_000;
    // /proc/<pid>/stat: "pid (comm) S ...", the state letter after the last ')'.
    const state = () => {
      const stat = readFileSync(`/proc/${this.child.pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    };
    while (state() !== 'T') {
      if (Date.now() > until) throw new Error(`${this.id} did not stop within 5 s of SIGSTOP`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    return { sentAt, frozenAt: Date.now() };
  }

  send(line: string): void {
    if (line === 'close') this.signals.push({ signal: 'close', at: Date.now() });
    this.child.stdin.write(`${line}\n`);
  }

  /** GET on the fixture's HTTP port: `/health` (terminus) or `/status`. */
  async get(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`http://127.0.0.1:${this.port}${path}`, { signal: AbortSignal.timeout(5_000) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /** When this instance had to keep calling the store: from ready until stopped, paused, killed or `until`. */
  contentionWindows(until: number): ContentionWindow[] {
    const ready = this.event('ready');
    if (!ready || !this.proxy) return [];
    const windows: ContentionWindow[] = [];
    let from: number | undefined = ready.at;
    const end = Math.min(until, this.exit?.at ?? until);
    for (const { signal, at } of this.signals) {
      if (signal === 'SIGCONT') {
        from ??= at;
      } else if (from !== undefined) {
        windows.push({ id: this.id, from, until: Math.min(at, end) });
        from = undefined;
      }
    }
    if (from !== undefined) windows.push({ id: this.id, from, until: end });
    return windows;
  }

  tail(lines = 15): string {
    return this.output
      .slice(-lines)
      .map((l) => `    ${this.id} ${l.stream}: ${l.text}`)
      .join('\n');
  }
}
