/**
 * The slice of `@opentelemetry/api` the metrics use, loaded on demand: the API is an optional peer,
 * so an app that never installed it must neither break nor pay for it. Structural types keep the
 * compile independent of the package too.
 */
export type Attributes = Readonly<Record<string, string>>;

export interface Counter {
  add(value: number, attributes?: Attributes): void;
}

export interface Histogram {
  record(value: number, attributes?: Attributes): void;
}

export interface ObservableResult {
  observe(value: number, attributes?: Attributes): void;
}

/** An asynchronous instrument (gauge or counter): observed by callbacks at collection time. */
export interface ObservableInstrument {
  addCallback(callback: (result: ObservableResult) => void): void;
  removeCallback(callback: (result: ObservableResult) => void): void;
}

interface InstrumentOptions {
  description?: string;
  unit?: string;
  advice?: { explicitBucketBoundaries?: number[] };
}

export interface Meter {
  createCounter(name: string, options?: InstrumentOptions): Counter;
  createHistogram(name: string, options?: InstrumentOptions): Histogram;
  createObservableGauge(name: string, options?: InstrumentOptions): ObservableInstrument;
  createObservableCounter(name: string, options?: InstrumentOptions): ObservableInstrument;
}

export interface MeterProvider {
  getMeter(name: string, version?: string): Meter;
}

interface OtelApi {
  metrics: { getMeterProvider(): MeterProvider };
  createNoopMeter(): Meter;
}

let loading: Promise<OtelApi | undefined> | undefined;

/** The API module, or undefined when it is not installed (looked up once per process). */
export function loadOtelApi(): Promise<OtelApi | undefined> {
  // A variable specifier: bundlers and the type checker must not insist on the optional peer.
  const specifier = '@opentelemetry/api';
  loading ??= import(specifier).then(
    (api: OtelApi) => api,
    () => undefined,
  );
  return loading;
}

/** Whether metrics record: an SDK's provider is registered, or why not (no API, or the API alone). */
export type MetricsWiring = 'recording' | 'no-api' | 'no-sdk';

/**
 * The meter to record with, or undefined when recording would be a no-op: no API installed, or no
 * SDK registered (the API's global provider hands out a NoopMeter). Undefined lets every hot path
 * skip its bookkeeping with one check instead of calling no-op instruments.
 */
export async function resolveMetrics(): Promise<{ meter: Meter | undefined; wiring: MetricsWiring }> {
  const api = await loadOtelApi();
  if (!api) return { meter: undefined, wiring: 'no-api' };
  const meter = api.metrics.getMeterProvider().getMeter(METER_NAME);
  if (meter.constructor === api.createNoopMeter().constructor) return { meter: undefined, wiring: 'no-sdk' };
  return { meter, wiring: 'recording' };
}

export const METER_NAME = '@leaderlease/nestjs';
