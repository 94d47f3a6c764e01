// Runner for the Apache ZooKeeper Java client (Debian libzookeeper-java), same CLI and JSON line as the
// JavaScript runners: java Bench <connectString> <workload> [key=value ...]. The workloads mirror
// bench/runners/harness.ts; the client's async API is used so requests pipeline like the others'.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

public final class Bench {
  static final Map<String, String> params = new LinkedHashMap<>();

  static long num(String k, long dflt) {
    String v = params.get(k);
    return v == null ? dflt : Long.parseLong(v);
  }

  static double cpuSeconds() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime() / 1e9;
  }

  static ZooKeeper connect(String cs) throws Exception {
    CountDownLatch up = new CountDownLatch(1);
    ZooKeeper zk = new ZooKeeper(cs, 30_000, e -> {
      if (e.getState() == Watcher.Event.KeeperState.SyncConnected) up.countDown();
    });
    if (!up.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("no session within 30 s");
    return zk;
  }

  static void ensure(ZooKeeper zk, String path, byte[] data, CreateMode mode) throws Exception {
    try {
      zk.create(path, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, mode);
    } catch (KeeperException.NodeExistsException e) {
      // already there
    }
  }

  static byte[] payload(int size) {
    byte[] b = new byte[size];
    for (int i = 0; i < size; i++) b[i] = (byte) (97 + i % 26);
    return b;
  }

  /** Measured window: completions, seconds, CPU and per-op latency (ms). */
  static final class Window {
    long ops;
    double seconds, cpu;
    double[] lat = new double[1 << 16];
    int n;

    void push(double v) {
      if (n == lat.length) lat = Arrays.copyOf(lat, n * 2);
      lat[n++] = v;
    }
  }

  interface Issuer {
    void issue(int lane, Runnable ok, java.util.function.Consumer<Integer> fail);
  }

  /** Keeps `outstanding` operations in flight: warm-up, then a measured window (see harness.ts closedLoop). */
  static Window closedLoop(int outstanding, long warmMs, long measureMs, Issuer issuer) throws Exception {
    Window w = new Window();
    long[] start = new long[outstanding];
    CompletableFuture<Window> done = new CompletableFuture<>();
    long warmEnd = System.nanoTime() + warmMs * 1_000_000L;
    // Callbacks all run on the client's single event thread; the lock only covers the first issues.
    Object lock = new Object();
    int[] phase = {0}; // 0 warm, 1 measure, 2 drain
    long[] t0 = {0};
    double[] cpu0 = {0};
    int[] inFlight = {0};
    IntConsumer[] fire = new IntConsumer[1];
    fire[0] = lane -> {
      inFlight[0]++;
      start[lane] = System.nanoTime();
      issuer.issue(lane, () -> {
        synchronized (lock) {
          inFlight[0]--;
          long t = System.nanoTime();
          if (phase[0] == 0 && t >= warmEnd) {
            phase[0] = 1;
            t0[0] = t;
            cpu0[0] = cpuSeconds();
          } else if (phase[0] == 1) {
            if (t - t0[0] >= measureMs * 1_000_000L) {
              phase[0] = 2;
              w.seconds = (t - t0[0]) / 1e9;
              w.cpu = cpuSeconds() - cpu0[0];
            } else {
              w.ops++;
              w.push((t - start[lane]) / 1e6);
            }
          }
          if (phase[0] != 2) fire[0].accept(lane);
          else if (inFlight[0] == 0) done.complete(w);
        }
      }, rc -> done.completeExceptionally(KeeperException.create(KeeperException.Code.get(rc))));
    };
    synchronized (lock) {
      for (int i = 0; i < outstanding; i++) fire[0].accept(i);
    }
    return done.get();
  }

  static void pipelined(int count, int outstanding, Issuer issuer) throws Exception {
    CompletableFuture<Void> done = new CompletableFuture<>();
    Object lock = new Object();
    int[] next = {0};
    int[] finished = {0};
    IntConsumer[] fire = new IntConsumer[1];
    fire[0] = ignored -> {
      int i = next[0]++;
      issuer.issue(i, () -> {
        synchronized (lock) {
          if (++finished[0] == count) done.complete(null);
          else if (next[0] < count) fire[0].accept(0);
        }
      }, rc -> done.completeExceptionally(KeeperException.create(KeeperException.Code.get(rc))));
    };
    synchronized (lock) {
      for (int k = 0; k < Math.min(outstanding, count); k++) fire[0].accept(0);
    }
    done.get();
  }

  static String json(String workload, Window w) {
    double[] s = Arrays.copyOf(w.lat, w.n);
    Arrays.sort(s);
    double p50 = s.length == 0 ? Double.NaN : s[Math.min(s.length - 1, (int) Math.floor(0.5 * s.length))];
    double p99 = s.length == 0 ? Double.NaN : s[Math.min(s.length - 1, (int) Math.floor(0.99 * s.length))];
    StringBuilder p = new StringBuilder("{");
    for (Map.Entry<String, String> e : params.entrySet()) {
      if (p.length() > 1) p.append(',');
      boolean isNum = !e.getKey().equals("root");
      p.append('"').append(e.getKey()).append("\":").append(isNum ? e.getValue() : "\"" + e.getValue() + "\"");
    }
    p.append('}');
    return String.format(java.util.Locale.ROOT,
        "{\"peer\":\"java\",\"runtime\":\"java %s\",\"workload\":\"%s\",\"params\":%s,\"ops\":%d,\"seconds\":%.3f,"
            + "\"opsPerSec\":%d,\"p50Ms\":%.3f,\"p99Ms\":%.3f,\"cpuSec\":%.3f,\"cpuPer10k\":%.3f}",
        System.getProperty("java.specification.version"), workload, p, w.ops, w.seconds, Math.round(w.ops / w.seconds),
        p50, p99, w.cpu, w.cpu / w.ops * 10_000);
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      System.err.println("usage: Bench <connectString> <workload> [key=value ...]");
      System.exit(2);
    }
    String cs = args[0];
    String workload = args[1];
    for (int i = 2; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      params.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    long warm = num("warmupMs", 1000);
    long ms = num("ms", 3000);
    String root = params.getOrDefault("root", "/bench/java-" + ProcessHandle.current().pid());
    ZooKeeper zk = connect(cs);
    StringBuilder p = new StringBuilder();
    for (String part : root.substring(1).split("/")) {
      p.append('/').append(part);
      ensure(zk, p.toString(), new byte[0], CreateMode.PERSISTENT);
    }
    Window w;
    switch (workload) {
      case "get": {
        String path = root + "/node";
        ensure(zk, path, payload((int) num("size", 100)), CreateMode.PERSISTENT);
        w = closedLoop((int) num("outstanding", 1), warm, ms, (lane, ok, fail) ->
            zk.getData(path, false, (rc, pth, ctx, data, stat) -> {
              if (rc == 0) ok.run();
              else fail.accept(rc);
            }, null));
        break;
      }
      case "set": {
        String path = root + "/node";
        byte[] data = payload((int) num("size", 100));
        ensure(zk, path, data, CreateMode.PERSISTENT);
        w = closedLoop((int) num("outstanding", 100), warm, ms, (lane, ok, fail) ->
            zk.setData(path, data, -1, (rc, pth, ctx, stat) -> {
              if (rc == 0) ok.run();
              else fail.accept(rc);
            }, null));
        break;
      }
      case "createDelete": {
        String prefix = root + "/e-";
        byte[] data = payload((int) num("size", 100));
        w = closedLoop((int) num("outstanding", 100), warm, ms, (lane, ok, fail) ->
            zk.create(prefix, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL, (rc, pth, ctx, name) -> {
              if (rc != 0) {
                fail.accept(rc);
                return;
              }
              zk.delete(name, -1, (rc2, p2, c2) -> {
                if (rc2 == 0) ok.run();
                else fail.accept(rc2);
              }, null);
            }, null));
        break;
      }
      case "connect":
        w = connectLoop(cs, warm, ms);
        break;
      case "watch":
        w = watchStorm(zk, root);
        break;
      case "watchLatency":
        w = watchLatency(cs, zk, root, warm, ms);
        break;
      default:
        throw new IllegalArgumentException("unknown workload " + workload);
    }
    zk.close();
    System.out.println(json(workload, w));
    System.out.flush();
    System.exit(0);
  }

  /** Sequential sessions: connect, then close (close waits for the server's reply). */
  static Window connectLoop(String cs, long warmMs, long measureMs) throws Exception {
    long warmEnd = System.nanoTime() + warmMs * 1_000_000L;
    while (System.nanoTime() < warmEnd) connect(cs).close();
    Window w = new Window();
    long t0 = System.nanoTime();
    double cpu0 = cpuSeconds();
    long end = t0 + measureMs * 1_000_000L;
    long t;
    while ((t = System.nanoTime()) < end) {
      connect(cs).close();
      w.ops++;
      w.push((System.nanoTime() - t) / 1e6);
    }
    w.seconds = (System.nanoTime() - t0) / 1e9;
    w.cpu = cpuSeconds() - cpu0;
    return w;
  }

  /** As harness.ts watchLatency: one cycle at a time; latency = setData issued → watcher call on another session. */
  static Window watchLatency(String cs, ZooKeeper zk, String root, long warmMs, long measureMs) throws Exception {
    ZooKeeper wz = connect(cs);
    String path = root + "/wl";
    byte[] data = payload(100);
    ensure(zk, path, data, CreateMode.PERSISTENT);
    Window w = new Window();
    long warmEnd = System.nanoTime() + warmMs * 1_000_000L;
    long t0 = 0;
    double cpu0 = 0;
    boolean measuring = false;
    while (true) {
      long now = System.nanoTime();
      if (!measuring && now >= warmEnd) {
        measuring = true;
        t0 = now;
        cpu0 = cpuSeconds();
      }
      if (measuring && now - t0 >= measureMs * 1_000_000L) break;
      CompletableFuture<Long> fired = new CompletableFuture<>();
      wz.getData(path, e -> fired.complete(System.nanoTime()), null);
      long tSet = System.nanoTime();
      zk.setData(path, data, -1);
      long tWatch = fired.get();
      if (measuring) {
        w.ops++;
        w.push((tWatch - tSet) / 1e6);
      }
    }
    w.seconds = (System.nanoTime() - t0) / 1e9;
    w.cpu = cpuSeconds() - cpu0;
    wz.close();
    return w;
  }

  static final class Storm {
    volatile long t0;
    volatile double cpu0;
  }

  static Window watchStorm(ZooKeeper zk, String root) throws Exception {
    int count = (int) num("count", 10_000);
    String dir = root + "/w";
    ensure(zk, dir, new byte[0], CreateMode.PERSISTENT);
    byte[] one = {48};
    pipelined(count, 500, (i, ok, fail) ->
        zk.create(dir + "/" + i, one, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL, (rc, p, c, n) -> {
          if (rc == 0 || rc == KeeperException.Code.NODEEXISTS.intValue()) ok.run();
          else fail.accept(rc);
        }, null));
    Window w = new Window();
    // Written by main, read on the event thread: volatile fields keep that visible.
    Storm st = new Storm();
    int[] seen = {0};
    CountDownLatch all = new CountDownLatch(1);
    Watcher onChange = e -> {
      if (e.getType() != Watcher.Event.EventType.NodeDataChanged) return;
      long t = System.nanoTime();
      w.push((t - st.t0) / 1e6);
      if (++seen[0] == count) {
        w.ops = count;
        w.seconds = (t - st.t0) / 1e9;
        w.cpu = cpuSeconds() - st.cpu0;
        all.countDown();
      }
    };
    pipelined(count, 500, (i, ok, fail) -> zk.getData(dir + "/" + i, onChange, (rc, p, c, d, s) -> {
      if (rc == 0) ok.run();
      else fail.accept(rc);
    }, null));
    System.out.println("{\"armed\":\"" + dir + "\",\"count\":" + count + "}");
    System.out.flush();
    new BufferedReader(new InputStreamReader(System.in)).readLine();
    st.cpu0 = cpuSeconds();
    st.t0 = System.nanoTime();
    all.await();
    return w;
  }
}
