// The optional OpenTelemetry bridge (test/package/consumer-types.test.ts): its .d.ts name only @opentelemetry/api,
// the optional peer dependency a consumer of this subpath installs.
import { metrics, trace } from "@opentelemetry/api";
import { instrument } from "zookeeper-ts/otel";

const stop: () => void = instrument({ tracerProvider: trace.getTracerProvider(), meterProvider: metrics.getMeterProvider() });
stop();
// @ts-expect-error a provider is an object, not a name
instrument({ tracerProvider: "otlp" });
