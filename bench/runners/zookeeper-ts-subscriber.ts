// zookeeper-ts with a plain zookeeper-ts:request subscriber attached (bench/runners/tracing.ts), then the
// zookeeper-ts runner itself (imports run in order).
import { subscribePlain } from "./tracing.ts";

subscribePlain();
await import("./zookeeper-ts.ts");
