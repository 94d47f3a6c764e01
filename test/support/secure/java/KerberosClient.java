// The Java ZooKeeper client logged in with Kerberos (the JAAS `Client` section: Krb5LoginModule and a
// keytab), for interop tests: it waits for SaslAuthenticated (or AuthFailed), runs one command and prints
// one line. Run: java -cp ZOOKEEPER_JARS -Djava.security.auth.login.config=JAAS
// -Djava.security.krb5.conf=KRB5CONF KerberosClient.java CONNECT COMMAND ARGS...
// Commands: whoami (WHO scheme:id per identity), get PATH (DATA text), create PATH DATA SASL_ID (CREATED
// path; ACL sasl:SASL_ID with every permission). A ZooKeeper error prints ERROR <code name>; a refused
// login AUTHFAILED; exit status 0 either way, 2 on a bad command line.
// watch keeps the client running: each event of the default watcher prints EVENT <KeeperState> <session id hex>;
// stdin takes "whoami" (WHOAMI scheme:id,... <States>, or ERROR <code> <States>) and "close" (CLOSED, then exit).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooDefs.Perms;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.ClientInfo;
import org.apache.zookeeper.data.Id;

public class KerberosClient {
  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      System.err.println("usage: KerberosClient CONNECT whoami | get PATH | create PATH DATA SASL_ID | watch");
      System.exit(2);
    }
    CountDownLatch done = new CountDownLatch(1);
    AtomicReference<KeeperState> outcome = new AtomicReference<>();
    AtomicReference<ZooKeeper> client = new AtomicReference<>();
    boolean watch = args[1].equals("watch");
    ZooKeeper zk = new ZooKeeper(args[0], watch ? 40000 : 10000, event -> {
      KeeperState s = event.getState();
      if (watch && event.getPath() == null) {
        ZooKeeper c = client.get();
        System.out.println("EVENT " + s + " 0x" + Long.toHexString(c == null ? 0 : c.getSessionId()));
        System.out.flush();
      }
      if (s == KeeperState.SaslAuthenticated || s == KeeperState.AuthFailed) {
        outcome.compareAndSet(null, s);
        done.countDown();
      }
    });
    client.set(zk);
    if (watch) {
      watch(zk);
      return;
    }
    try {
      if (!done.await(30, TimeUnit.SECONDS)) {
        System.out.println("TIMEOUT no SaslAuthenticated within 30 s");
        return;
      }
      if (outcome.get() == KeeperState.AuthFailed) {
        System.out.println("AUTHFAILED");
        return;
      }
      try {
        switch (args[1]) {
          case "whoami" -> {
            List<ClientInfo> ids = zk.whoAmI();
            for (ClientInfo i : ids) System.out.println("WHO " + i.getAuthScheme() + ":" + i.getUser());
          }
          case "get" -> System.out.println("DATA " + new String(zk.getData(args[2], false, null), StandardCharsets.UTF_8));
          case "create" -> {
            // A mutable list: ZooKeeper.validateACL asks it contains(null), which List.of() refuses.
            List<ACL> acl = new ArrayList<>(List.of(new ACL(Perms.ALL, new Id("sasl", args[4]))));
            System.out.println("CREATED " + zk.create(args[2], args[3].getBytes(StandardCharsets.UTF_8), acl, CreateMode.PERSISTENT));
          }
          default -> {
            System.err.println("unknown command " + args[1]);
            System.exit(2);
          }
        }
      } catch (KeeperException e) {
        System.out.println("ERROR " + e.code().name());
      }
    } finally {
      zk.close();
    }
  }

  static void watch(ZooKeeper zk) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] cmd = line.trim().split(" ");
      if (cmd[0].equals("close")) break;
      if (cmd[0].equals("whoami")) {
        try {
          List<String> ids = new ArrayList<>();
          for (ClientInfo i : zk.whoAmI()) ids.add(i.getAuthScheme() + ":" + i.getUser());
          System.out.println("WHOAMI " + String.join(",", ids) + " " + zk.getState());
        } catch (Exception e) {
          String code = e instanceof KeeperException k ? k.code().name() : e.getClass().getSimpleName();
          System.out.println("ERROR " + code + " " + zk.getState());
        }
        System.out.flush();
      }
    }
    zk.close();
    System.out.println("CLOSED");
    System.out.flush();
  }
}
