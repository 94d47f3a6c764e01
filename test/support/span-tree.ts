// Renders finished OpenTelemetry spans (an in-memory exporter's) as an indented tree of text: under each span,
// its child spans and its events (•) in the order they happened. For a test's failure message, a report or the docs:
//
//   leader election failover
//     create /app/election/_c_…-latch-  [CLIENT]
//     • zookeeper.election.elected  id=a token=4294967301
//
// Only structure and the attributes asked for are printed (no times, no ids), so the same run gives the
// same text.
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";

export interface SpanTreeOptions {
  /** Span attributes printed after the name, when set (default: error.type). */
  attributes?: readonly string[];
  /** Rewrites every printed name and value, e.g. to shorten a random znode name. */
  rewrite?: (text: string) => string;
  /** Indent per level (default two spaces). */
  indent?: string;
}

const KINDS = ["INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"];

/** Nanoseconds since the epoch of an OpenTelemetry HrTime, for ordering. */
const ns = (t: readonly [number, number]): bigint => BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]);

/** A span's parent id, as the SDK 2.x (`parentSpanContext`) or 1.x (`parentSpanId`) gives it. */
export function parentId(span: ReadableSpan): string | undefined {
  const s = span as ReadableSpan & { parentSpanId?: string };
  return s.parentSpanContext?.spanId ?? s.parentSpanId;
}

/** The spans whose parent is not among `spans` (the roots), each with its subtree, as text. */
export function renderSpanTree(spans: readonly ReadableSpan[], options: SpanTreeOptions = {}): string {
  const attributes = options.attributes ?? ["error.type"];
  const rewrite = options.rewrite ?? ((s: string) => s);
  const indent = options.indent ?? "  ";
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const children = new Map<string | undefined, ReadableSpan[]>();
  for (const s of spans) {
    const p = parentId(s);
    const key = p !== undefined && byId.has(p) ? p : undefined;
    children.set(key, [...(children.get(key) ?? []), s]);
  }
  const lines: string[] = [];
  const fields = (attrs: Record<string, unknown>, keys: readonly string[] | null): string =>
    (keys ?? Object.keys(attrs))
      .filter((k) => attrs[k] !== undefined)
      .map((k) => `${k.slice(k.lastIndexOf(".") + 1)}=${rewrite(String(attrs[k]))}`)
      .join(" ");
  const walk = (span: ReadableSpan, depth: number): void => {
    const pad = indent.repeat(depth);
    const kind = span.kind === 0 ? "" : `  [${KINDS[span.kind] ?? span.kind}]`;
    const status = span.status.code === 2 ? "  ERROR" : "";
    const attrs = fields(span.attributes, attributes);
    lines.push(`${pad}${rewrite(span.name)}${kind}${status}${attrs ? `  ${attrs}` : ""}`);
    // Events and child spans in one timeline (an event at the same time as a child's start goes first).
    const items: [bigint, ReadableSpan | ReadableSpan["events"][number]][] = [
      ...span.events.map((e): [bigint, ReadableSpan["events"][number]] => [ns(e.time), e]),
      ...(children.get(span.spanContext().spanId) ?? []).map((c): [bigint, ReadableSpan] => [ns(c.startTime), c]),
    ];
    items.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    for (const [, item] of items) {
      if ("spanContext" in item) walk(item, depth + 1);
      else {
        const text = fields(item.attributes ?? {}, null);
        lines.push(`${pad}${indent}• ${item.name}${text ? `  ${text}` : ""}`);
      }
    }
  };
  const roots = [...(children.get(undefined) ?? [])].sort((a, b) => (ns(a.startTime) < ns(b.startTime) ? -1 : 1));
  for (const root of roots) walk(root, 0);
  return lines.join("\n");
}
