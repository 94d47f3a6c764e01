// ZooKeeper's path rules (PathUtils) and chroot mapping, as the Java client does them.

function badChar(c: number): boolean {
  return (
    c === 0 ||
    (c > 0x0000 && c <= 0x001f) ||
    (c >= 0x007f && c <= 0x009f) ||
    (c >= 0xd800 && c <= 0xf8ff) ||
    (c >= 0xfff0 && c <= 0xffff)
  );
}

/**
 * Returns why `path` is not a valid ZooKeeper path, or null when it is. For a sequential create the
 * server appends a counter, so a trailing "/" is allowed there (validated with a digit appended).
 */
export function pathProblem(path: unknown, sequential = false): string | null {
  if (typeof path !== "string") return `path must be a string, got ${path === null ? "null" : typeof path}`;
  const p = sequential ? `${path}1` : path;
  if (p.length === 0) return "path must not be empty";
  if (p.charCodeAt(0) !== 0x2f) return "path must start with /";
  if (p.length === 1) return null;
  if (p.charCodeAt(p.length - 1) === 0x2f) return "path must not end with /";
  let segStart = 1;
  for (let i = 1; i <= p.length; i++) {
    const c = i < p.length ? p.charCodeAt(i) : 0x2f;
    if (c === 0x2f) {
      const len = i - segStart;
      if (len === 0) return `empty node name at index ${i}`;
      if ((len === 1 && p.charCodeAt(segStart) === 0x2e) || (len === 2 && p.startsWith("..", segStart))) {
        return `relative path segment "${p.slice(segStart, i)}" at index ${segStart}`;
      }
      segStart = i + 1;
    } else if (badChar(c)) {
      return `invalid character U+${c.toString(16).padStart(4, "0").toUpperCase()} at index ${i}`;
    }
  }
  return null;
}

export function isValidPath(path: string, sequential = false): boolean {
  return pathProblem(path, sequential) === null;
}

/** Client path -> server path. The client's "/" is the chroot itself. */
export function addChroot(chroot: string, path: string): string {
  if (!chroot) return path;
  return path === "/" ? chroot : chroot + path;
}

/** Server path -> client path. Paths outside the chroot (e.g. under /zookeeper) are left alone. */
export function stripChroot(chroot: string, serverPath: string): string {
  if (!chroot || !serverPath.startsWith(chroot)) return serverPath;
  if (serverPath.length === chroot.length) return "/";
  return serverPath.charCodeAt(chroot.length) === 0x2f ? serverPath.slice(chroot.length) : serverPath;
}

/** Parent of a path ("/" for top-level nodes). */
export function parentPath(path: string): string {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}

/** Joins a parent and a child name. */
export function joinPath(parent: string, name: string): string {
  return parent === "/" ? `/${name}` : `${parent}/${name}`;
}
