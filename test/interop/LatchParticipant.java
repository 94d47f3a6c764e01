// Apache Curator LeaderLatch participant (5.4.0 from the system, or 5.7.1: ZK_CURATOR, java-participant.ts) for interop tests with zookeeper-ts elections.
// Usage: LatchParticipant <connectString> <electionPath> <participantId> [sessionTimeoutMs]
// stdout, one flushed line per event:
//   READY | ELECTED <nanoTime> <epochMs> | REVOKED <nanoTime> <epochMs>
//   STATE <CONNECTED|SUSPENDED|RECONNECTED|LOST|READ_ONLY> <nanoTime> <epochMs>
//   replies: LEADER <id or -> | PARTICIPANTS id1,id2 | PATH <our znode> | HAS <true|false>
//            CLOCK <nanoTime> <epochMs> | VERSIONS <curator jar> <zookeeper client version> | CLOSED | ERROR <text>
// stdin commands: close, leader?, participants?, path?, has?, clock?, versions?. EOF on stdin = close,
// so a participant never outlives the test process that spawned it.
// System.nanoTime() reads CLOCK_MONOTONIC on Linux, like Node's process.hrtime, so the
// timestamps compare directly with the test's own monotonic clock.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.retry.RetryNTimes;

public final class LatchParticipant {
  private static boolean ready = false;

  private static synchronized void emit(String line) {
    System.out.println(line);
    System.out.flush();
  }

  private static String stamp() {
    return System.nanoTime() + " " + System.currentTimeMillis();
  }

  // READY precedes any ELECTED/REVOKED even when the listener fires before the poll sees our node.
  private static synchronized void markReady() {
    if (!ready) {
      ready = true;
      emit("READY");
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println("usage: LatchParticipant <connectString> <electionPath> <participantId> [sessionTimeoutMs]");
      System.exit(2);
    }
    int sessionMs = args.length > 3 ? Integer.parseInt(args[3]) : 6000;
    CuratorFramework client = CuratorFrameworkFactory.builder()
        .connectString(args[0])
        .sessionTimeoutMs(sessionMs)
        .connectionTimeoutMs(Math.min(sessionMs, 3000))
        .retryPolicy(new RetryNTimes(3, 100)) // short: tests want failures fast, not hidden
        .build();
    client.getConnectionStateListenable().addListener((c, state) -> emit("STATE " + state.name() + " " + stamp()));
    client.start();

    LeaderLatch latch = new LeaderLatch(client, args[1], args[2]);
    latch.addListener(new LeaderLatchListener() {
      @Override
      public void isLeader() {
        markReady();
        emit("ELECTED " + stamp());
      }

      @Override
      public void notLeader() {
        markReady();
        emit("REVOKED " + stamp());
      }
    });
    latch.start();

    // Commands run on their own thread so READY polling cannot block them (or EOF handling).
    Thread commands = new Thread(() -> readCommands(client, latch), "stdin");
    commands.setDaemon(true);
    commands.start();

    while (latch.getOurPath() == null) Thread.sleep(5);
    markReady();
    commands.join();
  }

  private static void readCommands(CuratorFramework client, LeaderLatch latch) {
    try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        String cmd = line.trim();
        if (cmd.isEmpty()) continue;
        if (cmd.equals("close")) break;
        try {
          answer(cmd, latch);
        } catch (Exception e) {
          emit("ERROR " + e.getClass().getSimpleName() + ": " + e.getMessage());
        }
      }
    } catch (Exception e) {
      emit("ERROR stdin " + e);
    }
    try {
      latch.close();
    } catch (Exception e) {
      emit("ERROR close " + e);
    }
    client.close();
    emit("CLOSED");
    System.exit(0);
  }

  private static void answer(String cmd, LeaderLatch latch) throws Exception {
    switch (cmd) {
      case "leader?": {
        String id = latch.getLeader().getId();
        emit("LEADER " + (id == null || id.isEmpty() ? "-" : id));
        break;
      }
      case "participants?": {
        List<String> ids = new ArrayList<>();
        for (Participant p : latch.getParticipants()) ids.add(p.getId());
        emit("PARTICIPANTS " + String.join(",", ids));
        break;
      }
      case "path?":
        emit("PATH " + latch.getOurPath());
        break;
      case "has?":
        emit("HAS " + latch.hasLeadership());
        break;
      case "clock?":
        emit("CLOCK " + stamp());
        break;
      case "versions?": // the jars this JVM actually loaded Curator and the ZooKeeper client from
        emit("VERSIONS " + LeaderLatch.class.getProtectionDomain().getCodeSource().getLocation().getPath()
            + " " + org.apache.zookeeper.Version.getFullVersion().split("[- ,]")[0]);
        break;
      default:
        emit("ERROR unknown command " + cmd);
    }
  }
}
