# Runner for kazoo (Debian's python3-kazoo), through its async API (get_async & co. with rawlink
# callbacks), same CLI and JSON line as bench/runners/harness.ts:
#   python3 kazoo_runner.py <connectString> <workload> [key=value ...]
# Callbacks run on kazoo's single callback thread; the lock only guards the first issues from main.
import json
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError

NUMERIC = {"outstanding", "ms", "warmupMs", "size", "count", "participants", "rounds", "permits"}


def connect(cs):
    zk = KazooClient(hosts=cs, timeout=30.0)
    zk.start(timeout=30)
    return zk


def close(zk):
    zk.stop()  # sends closeSession and waits for the link to go
    zk.close()


def payload(size):
    return bytes(97 + i % 26 for i in range(size))


def ensure(zk, path, data, ephemeral=False):
    try:
        zk.create(path, data, ephemeral=ephemeral)
    except NodeExistsError:
        pass


class Window:
    def __init__(self):
        self.ops = 0
        self.seconds = 0.0
        self.cpu = 0.0
        self.lat = []


def closed_loop(outstanding, warm_ms, measure_ms, issue):
    """Keeps `outstanding` ops in flight (see harness.ts closedLoop); issue(lane, ok, fail)."""
    w = Window()
    start = [0.0] * outstanding
    lock = threading.Lock()
    done = threading.Event()
    st = {"phase": 0, "t0": 0.0, "cpu0": 0.0, "inflight": 0, "err": None}
    warm_end = time.perf_counter() + warm_ms / 1000

    def fire(lane):
        st["inflight"] += 1
        start[lane] = time.perf_counter()
        issue(lane, lambda: completed(lane), failed)

    def failed(e):
        st["err"] = e
        done.set()

    def completed(lane):
        with lock:
            st["inflight"] -= 1
            t = time.perf_counter()
            if st["phase"] == 0 and t >= warm_end:
                st["phase"], st["t0"], st["cpu0"] = 1, t, time.process_time()
            elif st["phase"] == 1:
                if (t - st["t0"]) * 1000 >= measure_ms:
                    st["phase"] = 2
                    w.seconds = t - st["t0"]
                    w.cpu = time.process_time() - st["cpu0"]
                else:
                    w.ops += 1
                    w.lat.append((t - start[lane]) * 1000)
            if st["phase"] != 2:
                fire(lane)
            elif st["inflight"] == 0:
                done.set()

    with lock:
        for i in range(outstanding):
            fire(i)
    done.wait()
    if st["err"] is not None:
        raise st["err"]
    return w


def linked(ar, ok, fail):
    def cb(r):
        try:
            r.get()
        except Exception as e:  # noqa: BLE001 - any error ends the run
            return fail(e)
        ok()
    ar.rawlink(cb)


def pipelined(count, outstanding, issue):
    sem = threading.Semaphore(outstanding)
    left = [count]
    lock = threading.Lock()
    done = threading.Event()
    errs = []

    def ok():
        sem.release()
        with lock:
            left[0] -= 1
            if left[0] == 0:
                done.set()

    def fail(e):
        errs.append(e)
        done.set()

    for i in range(count):
        sem.acquire()
        if errs:
            break
        issue(i, ok, fail)
    if count:
        done.wait()
    if errs:
        raise errs[0]


def watch_storm(zk, root, count):
    d = root + "/w"
    ensure(zk, d, b"")

    def mk(i, ok, fail):
        def cb(r):
            try:
                r.get()
            except NodeExistsError:
                pass
            except Exception as e:  # noqa: BLE001
                return fail(e)
            ok()
        zk.create_async(f"{d}/{i}", b"0", ephemeral=True).rawlink(cb)

    pipelined(count, 500, mk)
    w = Window()
    st = {"t0": 0.0, "cpu0": 0.0, "seen": 0}
    all_done = threading.Event()

    def on_change(_ev):
        t = time.perf_counter()
        w.lat.append((t - st["t0"]) * 1000)
        st["seen"] += 1
        if st["seen"] == count:
            w.ops, w.seconds, w.cpu = count, t - st["t0"], time.process_time() - st["cpu0"]
            all_done.set()

    pipelined(count, 500, lambda i, ok, fail: linked(zk.get_async(f"{d}/{i}", watch=on_change), ok, fail))
    print(json.dumps({"armed": d, "count": count}), flush=True)
    sys.stdin.readline()
    st["cpu0"] = time.process_time()
    st["t0"] = time.perf_counter()
    all_done.wait()
    return w


def watch_latency(cs, zk, root, warm_ms, measure_ms):
    """As harness.ts watchLatency: p50 = setData issued → watcher call on another session."""
    wz = connect(cs)
    path = root + "/wl"
    data = payload(100)
    ensure(zk, path, data)
    reply_to_watch = []

    def cycle(measuring):
        ev = threading.Event()
        t = {}

        def on_watch(_e):
            t["w"] = time.perf_counter()
            if "r" in t:
                ev.set()

        wz.get(path, watch=on_watch)
        t["s"] = time.perf_counter()
        zk.set(path, data)
        t["r"] = time.perf_counter()
        if "w" not in t:
            ev.wait()
        if measuring:
            reply_to_watch.append((t["w"] - t["r"]) * 1000)
        return (t["w"] - t["s"]) * 1000

    end = time.perf_counter() + warm_ms / 1000
    while time.perf_counter() < end:
        cycle(False)
    w = Window()
    t0, c0 = time.perf_counter(), time.process_time()
    while (time.perf_counter() - t0) * 1000 < measure_ms:
        w.lat.append(cycle(True))
        w.ops += 1
    w.seconds, w.cpu = time.perf_counter() - t0, time.process_time() - c0
    close(wz)
    reply_to_watch.sort()
    return w, {"replyToWatchP50Ms": round(reply_to_watch[len(reply_to_watch) // 2], 3) if reply_to_watch else None}


def connect_loop(cs, warm_ms, measure_ms):
    end = time.perf_counter() + warm_ms / 1000
    while time.perf_counter() < end:
        close(connect(cs))
    w = Window()
    t0, c0 = time.perf_counter(), time.process_time()
    while (time.perf_counter() - t0) * 1000 < measure_ms:
        t = time.perf_counter()
        close(connect(cs))
        w.ops += 1
        w.lat.append((time.perf_counter() - t) * 1000)
    w.seconds, w.cpu = time.perf_counter() - t0, time.process_time() - c0
    return w


def serial_loop(warm_ms, measure_ms, op):
    """Calls op() back to back (a blocking acquire and release): warm-up, then a measured window."""
    w = Window()
    end = time.perf_counter() + warm_ms / 1000
    while time.perf_counter() < end:
        op()
    t0, cpu0 = time.perf_counter(), time.process_time()
    end = t0 + measure_ms / 1000
    while True:
        s = time.perf_counter()
        if s >= end:
            break
        op()
        w.lat.append((time.perf_counter() - s) * 1000)
        w.ops += 1
    w.seconds, w.cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return w


def main():
    if len(sys.argv) < 3:
        sys.stderr.write("usage: kazoo_runner.py <connectString> <workload> [key=value ...]\n")
        sys.exit(2)
    cs, workload = sys.argv[1], sys.argv[2]
    params = {}
    for a in sys.argv[3:]:
        k, v = a.split("=", 1)
        params[k] = (int(float(v)) if float(v).is_integer() else float(v)) if k in NUMERIC else v
    num = lambda k, d: int(params.get(k, d))  # noqa: E731
    warm, ms = num("warmupMs", 1000), num("ms", 3000)
    root = params.get("root", f"/bench/kazoo-{threading.get_native_id()}")
    zk = connect(cs)
    zk.ensure_path(root)
    extra = None
    if workload in ("get", "set"):
        path = root + "/node"
        data = payload(num("size", 100))
        ensure(zk, path, data)
        if workload == "get":
            w = closed_loop(num("outstanding", 1), warm, ms, lambda _l, ok, fail: linked(zk.get_async(path), ok, fail))
        else:
            w = closed_loop(num("outstanding", 100), warm, ms, lambda _l, ok, fail: linked(zk.set_async(path, data), ok, fail))
    elif workload == "createDelete":
        prefix = root + "/e-"
        data = payload(num("size", 100))

        def cd(_l, ok, fail):
            def created(r):
                try:
                    name = r.get()
                except Exception as e:  # noqa: BLE001
                    return fail(e)
                linked(zk.delete_async(name), ok, fail)
            zk.create_async(prefix, data, ephemeral=True, sequence=True).rawlink(created)

        w = closed_loop(num("outstanding", 100), warm, ms, cd)
    elif workload in ("semaphore", "readLock", "writeLock"):
        # One uncontended holder: acquire then release, back to back (the recipes' own round trips).
        if workload == "semaphore":
            recipe = zk.Semaphore(root + "/semaphore", max_leases=num("permits", 2))
        else:
            recipe = (zk.ReadLock if workload == "readLock" else zk.WriteLock)(root + "/rwlock")

        def acquire_release():
            recipe.acquire()
            recipe.release()

        w = serial_loop(warm, ms, acquire_release)
    elif workload == "connect":
        w = connect_loop(cs, warm, ms)
    elif workload == "watch":
        w = watch_storm(zk, root, num("count", 10_000))
    elif workload == "watchLatency":
        w, extra = watch_latency(cs, zk, root, warm, ms)
    else:
        raise SystemExit(f"unknown workload {workload}")
    close(zk)
    lat = sorted(w.lat)
    pct = lambda q: round(lat[min(len(lat) - 1, int(q * len(lat)))], 3) if lat else None  # noqa: E731
    out = {
        "peer": "kazoo", "runtime": "python " + sys.version.split()[0], "workload": workload, "params": params,
        "ops": w.ops, "seconds": round(w.seconds, 3), "opsPerSec": round(w.ops / w.seconds) if w.seconds else 0,
        "p50Ms": pct(0.5), "p99Ms": pct(0.99), "cpuSec": round(w.cpu, 3),
        "cpuPer10k": round(w.cpu / w.ops * 10_000, 3) if w.ops else None,
    }
    if extra:
        out["extra"] = extra
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001
        sys.stderr.write(f"kazoo failed: {e!r}\n")
        sys.exit(1)
    sys.exit(0)
