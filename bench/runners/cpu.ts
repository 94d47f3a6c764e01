// Client CPU seconds (user + sys, every thread of this process) so far. process.cpuUsage exists on
// Node and Bun; /proc/self/stat is the fallback for a runtime without it.
import { readFileSync } from "node:fs";

const CLK_TCK = 100; // Linux USER_HZ

function fromProc(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / CLK_TCK; // utime, stime (fields 14, 15)
}

function fromProcess(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

let impl: () => number = fromProc;
try {
  if (typeof process.cpuUsage === "function" && fromProcess() > 0) impl = fromProcess;
} catch {
  // keep /proc
}

export const readCpuSeconds = (): number => impl();
