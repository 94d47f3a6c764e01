// The wire layer: Jute codec, records, op table, framing, paths. No sockets, no timers.
export * from "./errors.ts";
export * from "./jute.ts";
export * from "./constants.ts";
export * from "./records.ts";
export * from "./ops.ts";
export * from "./multi.ts";
export * from "./frame.ts";
export * from "./path.ts";
export * from "./connect-string.ts";
