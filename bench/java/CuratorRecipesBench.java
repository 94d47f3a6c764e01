// Runner for Apache Curator's recipes (Debian libcurator-recipes-java), workloads semaphore (InterProcessSemaphoreV2,
// permits=2), readLock and writeLock (InterProcessReadWriteLock): one uncontended holder acquires and releases back
// to back. Same CLI and JSON line as the other runners (bench/runners/harness.ts):
//   java CuratorRecipesBench <connectString> <semaphore|readLock|writeLock> [ms=3000 warmupMs=1000 permits=2 root=/x]
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.RetryNTimes;

public final class CuratorRecipesBench {
  interface Op {
    void run() throws Exception;
  }

  static double cpuSeconds() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime() / 1e9;
  }

  public static void main(String[] args) throws Exception {
    String cs = args[0], workload = args[1];
    Map<String, String> params = new LinkedHashMap<>();
    for (int i = 2; i < args.length; i++) {
      String[] kv = args[i].split("=", 2);
      params.put(kv[0], kv[1]);
    }
    long ms = Long.parseLong(params.getOrDefault("ms", "3000"));
    long warmMs = Long.parseLong(params.getOrDefault("warmupMs", "1000"));
    int permits = Integer.parseInt(params.getOrDefault("permits", "2"));
    String root = params.getOrDefault("root", "/bench/curator-" + ProcessHandle.current().pid());
    CuratorFramework client = CuratorFrameworkFactory.newClient(cs, 30_000, 30_000, new RetryNTimes(3, 100));
    client.start();
    client.blockUntilConnected();
    Op op;
    if (workload.equals("semaphore")) {
      InterProcessSemaphoreV2 sem = new InterProcessSemaphoreV2(client, root + "/semaphore", permits);
      op = () -> {
        Lease lease = sem.acquire();
        sem.returnLease(lease);
      };
    } else if (workload.equals("readLock") || workload.equals("writeLock")) {
      InterProcessReadWriteLock rw = new InterProcessReadWriteLock(client, root + "/rwlock");
      InterProcessMutex side = workload.equals("readLock") ? rw.readLock() : rw.writeLock();
      op = () -> {
        side.acquire();
        side.release();
      };
    } else {
      System.err.println("unknown workload " + workload);
      System.exit(2);
      return;
    }
    long warmEnd = System.nanoTime() + warmMs * 1_000_000L;
    while (System.nanoTime() < warmEnd) op.run();
    double[] lat = new double[1 << 16];
    int n = 0;
    double cpu0 = cpuSeconds();
    long t0 = System.nanoTime(), end = t0 + ms * 1_000_000L;
    for (long s = t0; s < end; s = System.nanoTime()) {
      op.run();
      if (n == lat.length) lat = Arrays.copyOf(lat, n * 2);
      lat[n++] = (System.nanoTime() - s) / 1e6;
    }
    double seconds = (System.nanoTime() - t0) / 1e9, cpu = cpuSeconds() - cpu0;
    client.close();
    double[] sorted = Arrays.copyOf(lat, n);
    Arrays.sort(sorted);
    StringBuilder p = new StringBuilder("{");
    for (Map.Entry<String, String> e : params.entrySet()) {
      if (p.length() > 1) p.append(',');
      boolean numeric = e.getValue().matches("-?\\d+(\\.\\d+)?");
      p.append('"').append(e.getKey()).append("\":").append(numeric ? e.getValue() : "\"" + e.getValue() + "\"");
    }
    p.append('}');
    System.out.printf(java.util.Locale.ROOT,
        "{\"peer\":\"curator\",\"runtime\":\"java %s\",\"workload\":\"%s\",\"params\":%s,\"ops\":%d,\"seconds\":%.3f,\"opsPerSec\":%d,\"p50Ms\":%.3f,\"p99Ms\":%.3f,\"cpuSec\":%.3f,\"cpuPer10k\":%.3f}%n",
        System.getProperty("java.version"), workload, p, n, seconds, Math.round(n / seconds), sorted[n / 2], sorted[Math.min(n - 1, (int) (n * 0.99))], cpu, cpu / n * 10_000);
    System.exit(0);
  }
}
