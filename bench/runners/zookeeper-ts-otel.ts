// zookeeper-ts with the OpenTelemetry bridge on the real SDK (bench/runners/tracing.ts), then the
// zookeeper-ts runner itself.
import { instrumentOtel } from "./tracing.ts";

instrumentOtel();
await import("./zookeeper-ts.ts");
