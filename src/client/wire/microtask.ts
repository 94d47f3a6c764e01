// One way to run code in a microtask: a reaction of a settled promise. It runs in the same queue, in the same
// order, as queueMicrotask's callbacks and the replies' promise reactions, but Node's queueMicrotask makes an
// AsyncResource (and a bound function) per call: a real share of a notification's cost in a watch storm, and
// of a write batch's at one request outstanding.
const settled = Promise.resolve();

/** Runs `task` in a microtask (after the current one). A throw becomes an unhandled rejection, so do not throw. */
export function microtask(task: () => void): void {
  void settled.then(task);
}
