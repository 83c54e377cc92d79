import { metrics } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';

/**
 * The OpenTelemetry SDK, with a Prometheus exporter that `GET /metrics` serves (no server of its
 * own: one port per replica is enough). Registered globally *before* the Nest app is created:
 * the library takes its meter from the global provider when the module initialises (and logs
 * "metrics: recording …" when it finds it). `withoutScopeInfo`: every series carries exactly the
 * labels docs/reference/metrics.md lists, without the exporter's default `otel_scope_name` label.
 *
 * To push over OTLP instead, swap the reader:
 * `new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url }) })`.
 */
export const prometheusExporter = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true });

export function startTelemetry(): MeterProvider {
  const provider = new MeterProvider({ readers: [prometheusExporter] });
  metrics.setGlobalMeterProvider(provider);
  return provider;
}
