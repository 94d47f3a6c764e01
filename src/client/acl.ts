// Well-known ids and ACLs, and the digest id helper.
import { createHash } from "node:crypto";
import { Perms } from "../protocol/constants.ts";
import type { ACL, Id } from "../protocol/records.ts";

const ANYONE_ID_UNSAFE: Id = Object.freeze({ scheme: "world", id: "anyone" });
const AUTH_IDS: Id = Object.freeze({ scheme: "auth", id: "" });

export const Ids = Object.freeze({
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
