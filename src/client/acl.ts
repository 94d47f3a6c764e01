// Well-known ids and ACLs, and the digest id helper.
import { createHash } from "node:crypto";
import { Perms } from "../protocol/constants.ts";
import type { ACL, Id } from "../protocol/records.ts";

const ANYONE_ID_UNSAFE: Id = Object.freeze({ scheme: "world", id: "anyone" });
const AUTH_IDS: Id = Object.freeze({ scheme: "auth", id: "" });

/** The Java client's well-known ids and ACLs (`ZooDefs.Ids`). */
export const Ids: {
  /** world:anyone, every client. */
  readonly ANYONE_ID_UNSAFE: Id;
  /** auth: the identities authenticated on the creating connection. */
  readonly AUTH_IDS: Id;
  /** Everything for everyone (the default ACL of `create`). */
  readonly OPEN_ACL_UNSAFE: readonly ACL[];
  /** Everything for the creator's authenticated identities (fails with INVALIDACL without any). */
  readonly CREATOR_ALL_ACL: readonly ACL[];
  /** Read for everyone. */
  readonly READ_ACL_UNSAFE: readonly ACL[];
} = Object.freeze({
  ANYONE_ID_UNSAFE,
  AUTH_IDS,
  OPEN_ACL_UNSAFE: Object.freeze([Object.freeze({ perms: Perms.ALL, id: ANYONE_ID_UNSAFE })]) as readonly ACL[],
  CREATOR_ALL_ACL: Object.freeze([Object.freeze({ perms: Perms.ALL, id: AUTH_IDS })]) as readonly ACL[],
  READ_ACL_UNSAFE: Object.freeze([Object.freeze({ perms: Perms.READ, id: ANYONE_ID_UNSAFE })]) as readonly ACL[],
});

/** The id a digest ACL names: "user:base64(sha1(user:password))". */
export function digestId(user: string, password: string): string {
  const hash = createHash("sha1").update(`${user}:${password}`, "utf8").digest("base64");
  return `${user}:${hash}`;
}
