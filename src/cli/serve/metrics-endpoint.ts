/**
 * `spillway serve bounded --metrics`: the guard's decisions as Prometheus metrics on
 * `/metrics`, through `spillway/otel` and OpenTelemetry's Prometheus exporter — the recipe of
 * docs/observability.md, run. The OpenTelemetry packages are the user's to install (optional
 * peers, dev dependencies here), so they load only when asked for, with a message naming them
 * when they are missing.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type * as Prometheus from '@opentelemetry/exporter-prometheus';
import type * as Sdk from '@opentelemetry/sdk-metrics';
import type * as Otel from '../../otel/index.js';
import type { ObservedGuard } from '../../otel/index.js';
import { UsageError } from '../command.js';

/** What `--metrics` needs installed. */
const packages = [
  '@opentelemetry/api',
  '@opentelemetry/sdk-metrics',
  '@opentelemetry/exporter-prometheus',
] as const;

/** The path the metrics are served on, exempt from admission. */
export const metricsPath = '/metrics';

/** A running metrics endpoint. */
export interface MetricsEndpoint {
  /** Answers a scrape in Prometheus's text format. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Stops recording and shuts the SDK down. */
  close(): Promise<void>;
}

/** Starts recording `guard`'s decisions for scrapes on {@link metricsPath}. */
export async function startMetricsEndpoint(guard: ObservedGuard): Promise<MetricsEndpoint> {
  let sdk: typeof Sdk;
  let exporterModule: typeof Prometheus;
  let otel: typeof Otel;
  try {
    [sdk, exporterModule, otel] = await Promise.all([
      import('@opentelemetry/sdk-metrics'),
      import('@opentelemetry/exporter-prometheus'),
      import('../../otel/index.js'),
    ]);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new UsageError(
      `--metrics needs OpenTelemetry installed beside spillway: npm install ${packages.join(' ')}`,
    );
  }
  // Scraped through our own route (exempt from admission), not a server of the exporter's.
  const exporter = new exporterModule.PrometheusExporter({ preventServerStart: true });
  const provider = new sdk.MeterProvider({ readers: [exporter] });
  const recording = otel.otelMetrics({ meterProvider: provider, routes: [guard] });
  return {
    handle: (req, res) => exporter.getMetricsRequestHandler(req, res),
    close: async () => {
      recording.close();
      await provider.shutdown();
    },
  };
}
