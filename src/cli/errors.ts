// The CLI's own errors: what the commands throw and main/shell turn into an exit status.

/** A mistake in the command line: exit status 2, with the usage. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** A failure that is not a ZooKeeper error (e.g. "no leader"): exit status 1, the message as is. */
export class Failure extends Error {
  override readonly name = "Failure";
}
