// The real OpenTelemetry SDK as the bridge's tests use it: the AsyncLocalStorage context manager made the global
// one, spans kept in memory (InMemorySpanExporter, SimpleSpanProcessor), and the bridge (zookeeper-ts/otel) on.
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import type { MeterProvider } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { instrument } from "../../src/otel/index.ts";

export interface OtelSdk {
  readonly exporter: InMemorySpanExporter;
  readonly tracerProvider: BasicTracerProvider;
  /** The bridge's off(). */
  off(): void;
  /** off(), then the global context manager and tracer provider undone. */
  dispose(): void;
}

export function otelSdk(options: { meterProvider?: MeterProvider } = {}): OtelSdk {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const off = instrument({ tracerProvider, meterProvider: options.meterProvider });
  return {
    exporter,
    tracerProvider,
    off,
    dispose() {
      off();
      context.disable();
      trace.disable();
    },
  };
}
