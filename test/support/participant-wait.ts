// Waiting helpers for recipe tests: nextEvent and until come from wait.ts (one implementation);
// sleep stays for fault timing (how long a fault lasts), never as a wait for a fact.

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export { nextEvent, until } from "./wait.ts";
export { sleep };
