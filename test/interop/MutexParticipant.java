// Apache Curator 5.4.0 InterProcessMutex / LeaderSelector participant for interop tests with
// zookeeper-ts locks and elections.
// Usage: MutexParticipant <connectString> <path> <id> <sessionTimeoutMs> <mutex|selector|read|write|sem:PERMITS> [holdMs]
// (read/write: InterProcessReadWriteLock's read or write lock; sem: an InterProcessSemaphoreV2 lease; HOLD's token is 0)
// stdout, one flushed line per event (stamps: System.nanoTime() = CLOCK_MONOTONIC, epoch ms):
//   READY | HOLD <ns> <ms> <czxid> | FREE <ns> <ms> (ns = the last moment it still knew it held)
//   ELECTED <ns> <ms> | REVOKED <ns> <ms> | STATE <state> <ns> <ms>
//   replies: LEADER <id|-> | PARTICIPANTS id1,id2 | SERVER <port|-> | CLOCK <ns> <ms> | CLOSED | ERROR <text>
//   LEASE <the lease znode's path while a semaphore lease is held | -> | SESSION <0x session id>
// stdin: close, leader?, participants?, server?, clock?, lease?, session? (EOF = close).
// sem: the lease znodes' data is the id (setNodeData; without it Curator stores the host's address).
// mutex: acquire, hold holdMs while the connection state stays CONNECTED/RECONNECTED, release, again.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryForever;

public final class MutexParticipant {
  /** What the hold loop takes and gives back: a mutex, one side of a read-write lock, or a semaphore lease. */
  private interface Holder {
    void acquire() throws Exception;
    long token() throws Exception;
    void release() throws Exception;
  }

  private static volatile boolean connected = true;
  private static volatile long lostEpoch = 0; // bumps on every SUSPENDED/LOST
  private static volatile String leaseNode = "-"; // sem: the lease held

  private static synchronized void emit(String line) {
    System.out.println(line);
    System.out.flush();
  }

  private static String stamp(long ns) {
    return ns + " " + System.currentTimeMillis();
  }

  public static void main(String[] args) throws Exception {
    String path = args[1], id = args[2], mode = args[4];
    int sessionMs = Integer.parseInt(args[3]);
    long holdMs = args.length > 5 ? Long.parseLong(args[5]) : 30;
    CuratorFramework client = CuratorFrameworkFactory.builder()
        .connectString(args[0]).sessionTimeoutMs(sessionMs).connectionTimeoutMs(Math.min(sessionMs, 3000))
        .retryPolicy(new RetryForever(100)).build();
    client.getConnectionStateListenable().addListener((c, state) -> {
      connected = state == ConnectionState.CONNECTED || state == ConnectionState.RECONNECTED;
      if (!connected) lostEpoch++;
      emit("STATE " + state.name() + " " + stamp(System.nanoTime()));
    });
    client.start();
    client.blockUntilConnected();
    if (mode.equals("selector")) {
      LeaderSelector selector = new LeaderSelector(client, path, new LeaderSelectorListenerAdapter() {
        @Override
        public void takeLeadership(CuratorFramework c) throws Exception {
          emit("ELECTED " + stamp(System.nanoTime()));
          try {
            Thread.sleep(Long.MAX_VALUE);
          } finally {
            emit("REVOKED " + stamp(System.nanoTime()));
          }
        }
      });
      selector.setId(id);
      selector.autoRequeue();
      selector.start();
      emit("READY");
      commands(client, selector);
      return;
    }
    Holder holder;
    if (mode.equals("read") || mode.equals("write")) {
      InterProcessReadWriteLock rw = new InterProcessReadWriteLock(client, path, id.getBytes(StandardCharsets.UTF_8));
      InterProcessMutex side = mode.equals("read") ? rw.readLock() : rw.writeLock();
      holder = new Holder() {
        public void acquire() throws Exception { side.acquire(); }
        public long token() { return 0; }
        public void release() throws Exception { side.release(); }
      };
    } else if (mode.startsWith("sem:")) {
      InterProcessSemaphoreV2 sem = new InterProcessSemaphoreV2(client, path, Integer.parseInt(mode.substring(4)));
      sem.setNodeData(id.getBytes(StandardCharsets.UTF_8));
      Lease[] lease = new Lease[1];
      holder = new Holder() {
        public void acquire() throws Exception {
          lease[0] = sem.acquire();
          leaseNode = lease[0].getNodeName();
        }
        public long token() { return 0; }
        public void release() throws Exception {
          leaseNode = "-";
          sem.returnLease(lease[0]);
        }
      };
    } else {
      InterProcessMutex mutex = new InterProcessMutex(client, path);
      holder = new Holder() {
        public void acquire() throws Exception { mutex.acquire(); }
        public long token() throws Exception {
          String first = mutex.getParticipantNodes().iterator().next(); // ours while we hold
          return client.checkExists().forPath(first).getCzxid();
        }
        public void release() throws Exception { mutex.release(); }
      };
    }
    Thread loop = new Thread(() -> holdLoop(holder, holdMs), "holder");
    loop.setDaemon(true);
    loop.start();
    emit("READY");
    commands(client, null);
  }

  private static void holdLoop(Holder mutex, long holdMs) {
    for (;;) {
      try {
        mutex.acquire();
        long epoch = lostEpoch;
        long czxid = mutex.token();
        long last = System.nanoTime();
        if (connected && epoch == lostEpoch) {
          emit("HOLD " + stamp(last) + " " + czxid);
          long end = last + holdMs * 1_000_000L;
          while (connected && epoch == lostEpoch && System.nanoTime() < end) {
            last = System.nanoTime();
            Thread.sleep(2);
          }
          emit("FREE " + stamp(last));
        }
        mutex.release();
        Thread.sleep((long) (Math.random() * 5));
      } catch (Exception e) {
        emit("ERROR " + e.getClass().getSimpleName());
        try {
          Thread.sleep(100);
        } catch (InterruptedException ie) {
          return;
        }
      }
    }
  }

  private static void commands(CuratorFramework client, LeaderSelector selector) {
    try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        String cmd = line.trim();
        if (cmd.equals("close")) break;
        try {
          switch (cmd) {
            case "leader?": {
              String id = selector == null ? null : selector.getLeader().getId();
              emit("LEADER " + (id == null || id.isEmpty() ? "-" : id));
              break;
            }
            case "participants?": {
              List<String> ids = new ArrayList<>();
              if (selector != null) for (Participant p : selector.getParticipants()) ids.add(p.getId());
              emit("PARTICIPANTS " + String.join(",", ids));
              break;
            }
            case "server?": {
              String s = client.getZookeeperClient().getZooKeeper().toString();
              int i = s.indexOf("remoteserver:");
              String port = "-";
              if (i >= 0) {
                String rest = s.substring(i + "remoteserver:".length()).split(" ")[0];
                port = rest.substring(rest.lastIndexOf(':') + 1);
              }
              emit("SERVER " + port);
              break;
            }
            case "clock?":
              emit("CLOCK " + stamp(System.nanoTime()));
              break;
            case "lease?":
              emit("LEASE " + leaseNode);
              break;
            case "session?":
              emit("SESSION 0x" + Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId()));
              break;
            default:
              emit("ERROR unknown command " + cmd);
          }
        } catch (Exception e) {
          emit("ERROR " + e.getClass().getSimpleName() + ": " + e.getMessage());
        }
      }
    } catch (Exception e) {
      emit("ERROR stdin " + e);
    }
    if (selector != null) selector.close();
    client.close();
    emit("CLOSED");
    System.exit(0);
  }
}
