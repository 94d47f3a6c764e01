// The two traced variants of the zookeeper-ts runner (issue 32): the same workloads with someone listening.
//   subscriber  a plain zookeeper-ts:request TracingChannel subscriber: all five events, minimal work
//               (a counter per event), as a tracer's cheapest hook costs the client
//   otel        the OpenTelemetry bridge (zookeeper-ts/otel) on the real SDK, set up as an application
//               would: BasicTracerProvider with a BatchSpanProcessor over an exporter that drops the spans,
//               a MeterProvider with a reader (the histogram is recorded), AsyncLocalStorageContextManager
// Imported before the runner by zookeeper-ts-subscriber.ts and zookeeper-ts-otel.ts.
import * as dc from "node:diagnostics_channel";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { AggregationTemporality, MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { instrument } from "../../src/otel/index.ts";

/** Events seen by the plain subscriber (kept, so its work is not optimized away). */
export const seen = { start: 0, end: 0, asyncStart: 0, asyncEnd: 0, error: 0 };

export function subscribePlain(): void {
  const handlers = {
    start: () => void seen.start++,
    end: () => void seen.end++,
    asyncStart: () => void seen.asyncStart++,
    asyncEnd: () => void seen.asyncEnd++,
    error: () => void seen.error++,
  };
  (dc.tracingChannel("zookeeper-ts:request") as unknown as { subscribe(h: typeof handlers): void }).subscribe(handlers);
}

/** Exports nothing: the spans are built, ended and batched as in production, then dropped. */
class DropExporter implements SpanExporter {
  exported = 0;
  export(spans: ReadableSpan[], done: (result: { code: number }) => void): void {
    this.exported += spans.length;
    done({ code: 0 /* ExportResultCode.SUCCESS */ });
  }
  async shutdown(): Promise<void> {}
}

/** A reader that is never asked to collect: the histogram's recording cost, no export. */
class IdleReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

export function instrumentOtel(): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new DropExporter())] });
  const meterProvider = new MeterProvider({ readers: [new IdleReader()] });
  instrument({ tracerProvider, meterProvider });
}
