// Path rules, chroot mapping and connect-string parsing, as ZooKeeper's PathUtils.validatePath and
// ConnectStringParser define them (the Java client checks every path before sending it).
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  ProtocolError,
  ProtocolErrorKind,
  addChroot,
  isValidPath,
  joinPath,
  parentPath,
  parseConnectString,
  pathProblem,
  stripChroot,
} from "../../src/protocol/index.ts";

const VALID = ["/", "/a", "/a/.b", "/...", "/a/b/c", "/.a/..b/b..", "/zookeeper/config", "/ü/日本/\u00a0/\uf900/\uffef", "/a b"];
const INVALID = [
  "", "a", "a/b", "/a/", "//", "/a//b", "/.", "/..", "/a/.", "/a/..", "/./a", "/../a",
  "\u0000", "/\u0000", "/a\u0001", "/\u001f", "/\u007f", "/\u0080", "/\u009f",
  "/\ud800", "/\udbff\udfff", "/😀", "/\ue000", "/\uf8ff", "/\ufff0", "/\ufffe", "/\uffff",
];

describe("pathProblem / isValidPath", () => {
  for (const p of VALID) {
    it(`accepts ${JSON.stringify(p)}`, () => {
      assert.equal(pathProblem(p), null);
      assert.equal(isValidPath(p), true);
    });
  }
  for (const p of INVALID) {
    it(`rejects ${JSON.stringify(p)} with a reason`, () => {
      const why = pathProblem(p);
      assert.equal(typeof why, "string");
      assert.ok(why!.length > 0);
      assert.equal(isValidPath(p), false);
    });
  }

  it("names the offending character and index", () => {
    assert.match(pathProblem("/ab\u0007")!, /U\+0007 at index 3/);
    assert.match(pathProblem("/a/..")!, /relative/);
    assert.match(pathProblem("/a//b")!, /empty/);
  });

  it("rejects non-strings", () => {
    for (const v of [undefined, null, 1, {}, ["/a"], Symbol("p"), 1n]) {
      assert.match(pathProblem(v)!, /must be a string/);
    }
    assert.match(pathProblem(null)!, /null/);
  });

  it("allows a trailing / only for sequential creates", () => {
    assert.equal(isValidPath("/parent/", true), true);
    assert.equal(isValidPath("/lock-", true), true);
    assert.equal(isValidPath("/", true), true);
    assert.equal(isValidPath("/parent/", false), false);
    assert.equal(isValidPath("/a//", true), false);
    assert.equal(isValidPath("/a/.", true), true); // becomes "/a/.1", a legal name
    assert.equal(isValidPath("", true), false);
    assert.equal(isValidPath("a/", true), false);
  });

  it("agrees with a reference model of the rules on random strings", () => {
    const allowed = (c: number): boolean =>
      !(c <= 0x1f || (c >= 0x7f && c <= 0x9f) || (c >= 0xd800 && c <= 0xf8ff) || c >= 0xfff0);
    const model = (p: string): boolean => {
      if (p === "/") return true;
      if (!p.startsWith("/")) return false;
      const segs = p.slice(1).split("/");
      if (segs.some((s) => s === "" || s === "." || s === "..")) return false;
      for (let i = 0; i < p.length; i++) if (!allowed(p.charCodeAt(i))) return false;
      return true;
    };
    const piece = fc.oneof(
      fc.constantFrom("/", ".", "..", "a", "\u0000", "\u001f", "\u007f", "\u00a0", "\ud83d", "\ude00", "\ufff0", "\uf8ff", "\uf900", "é"),
      fc.string({ unit: "binary-ascii", maxLength: 3 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), (parts) => {
        const p = parts.join("");
        assert.equal(isValidPath(p), model(p), JSON.stringify(p));
      }),
      { numRuns: 2000 },
    );
  });
});

describe("chroot mapping", () => {
  it("adds the chroot: client / is the chroot itself", () => {
    assert.equal(addChroot("/app", "/"), "/app");
    assert.equal(addChroot("/app", "/x/y"), "/app/x/y");
    assert.equal(addChroot("", "/x"), "/x");
    assert.equal(addChroot("", "/"), "/");
  });

  it("strips the chroot: the chroot itself is /", () => {
    assert.equal(stripChroot("/app", "/app"), "/");
    assert.equal(stripChroot("/app", "/app/x"), "/x");
    assert.equal(stripChroot("/app", "/app/x/y"), "/x/y");
    assert.equal(stripChroot("", "/app/x"), "/app/x");
  });

  it("leaves paths outside the chroot alone, including prefix-but-not-boundary", () => {
    assert.equal(stripChroot("/app", "/apple"), "/apple");
    assert.equal(stripChroot("/app", "/apple/x"), "/apple/x");
    assert.equal(stripChroot("/app", "/zookeeper/config"), "/zookeeper/config");
    assert.equal(stripChroot("/app", "/ap"), "/ap");
    assert.equal(stripChroot("/a/b", "/a"), "/a");
  });

  it("strip(add(p)) === p for valid paths and chroots", () => {
    const name = fc.string({ unit: fc.constantFrom("a", "b", "-", "."), minLength: 1, maxLength: 3 }).filter((s) => s !== "." && s !== "..");
    const path = fc.array(name, { maxLength: 4 }).map((xs) => `/${xs.join("/")}`);
    const chroot = fc.array(name, { minLength: 1, maxLength: 3 }).map((xs) => `/${xs.join("/")}`);
    fc.assert(
      fc.property(chroot, path, (c, p) => {
        assert.ok(isValidPath(addChroot(c, p)), addChroot(c, p));
        assert.equal(stripChroot(c, addChroot(c, p)), p);
      }),
      { numRuns: 500 },
    );
  });

  it("parentPath and joinPath", () => {
    assert.equal(parentPath("/a/b"), "/a");
    assert.equal(parentPath("/a"), "/");
    assert.equal(parentPath("/"), "/");
    assert.equal(joinPath("/", "a"), "/a");
    assert.equal(joinPath("/a", "b"), "/a/b");
  });
});

function invalidArgument(text: string): ProtocolError {
  try {
    parseConnectString(text);
  } catch (e) {
    assert.ok(e instanceof ProtocolError, `threw ${String(e)}`);
    assert.equal(e.kind, ProtocolErrorKind.INVALID_ARGUMENT);
    return e;
  }
  assert.fail(`${JSON.stringify(text)} parsed`);
}

describe("parseConnectString", () => {
  it("parses hosts with and without ports (default 2181)", () => {
    assert.deepStrictEqual(parseConnectString("127.0.0.1:2181"), { hosts: [{ host: "127.0.0.1", port: 2181 }], chroot: "" });
    assert.deepStrictEqual(parseConnectString("a:1,b,c:65535"), {
      hosts: [{ host: "a", port: 1 }, { host: "b", port: 2181 }, { host: "c", port: 65535 }],
      chroot: "",
    });
  });

  it("gives a trailing ':' the default port", () => {
    assert.deepStrictEqual(parseConnectString("a:").hosts, [{ host: "a", port: 2181 }]);
  });

  it("parses bracketed IPv6 with and without ports", () => {
    assert.deepStrictEqual(parseConnectString("[::1]:2182,[fe80::1%eth0],[::1]:").hosts, [
      { host: "::1", port: 2182 },
      { host: "fe80::1%eth0", port: 2181 },
      { host: "::1", port: 2181 },
    ]);
  });

  it("takes the chroot from the first / for all hosts; bare / means none", () => {
    assert.deepStrictEqual(parseConnectString("a:1,b:2/app/x"), {
      hosts: [{ host: "a", port: 1 }, { host: "b", port: 2 }],
      chroot: "/app/x",
    });
    assert.equal(parseConnectString("a:1/").chroot, "");
    // Everything after the first "/" is the chroot, even text that looks like more hosts.
    assert.deepStrictEqual(parseConnectString("a:1/app,b:2"), { hosts: [{ host: "a", port: 1 }], chroot: "/app,b:2" });
  });

  it("trims whitespace and ignores empty entries", () => {
    assert.deepStrictEqual(parseConnectString("  a:1 , ,b , ,").hosts, [{ host: "a", port: 1 }, { host: "b", port: 2181 }]);
    assert.deepStrictEqual(parseConnectString(",a").hosts, [{ host: "a", port: 2181 }]);
  });

  it("rejects bad ports, hosts and chroots with ProtocolError", () => {
    for (const bad of ["a:x", "a:0", "a:65536", "a:-1", "a:1.5", "a: 1x", "[::1", "[::1]x", "[::1]:abc", "::1", "a:1:2", ":2181", "", " , ", "/app", "a/app/", "a//b", "a/.."]) {
      const e = invalidArgument(bad);
      assert.ok(e.message.length > 0);
    }
  });

  it("rejects non-strings with ProtocolError", () => {
    assert.throws(() => parseConnectString(42 as unknown as string), ProtocolError);
  });
});
