// The Java ZooKeeper client logged in with Kerberos (the JAAS `Client` section: Krb5LoginModule and a
// keytab), for interop tests: it waits for SaslAuthenticated (or AuthFailed), runs one command and prints
// one line. Run: java -cp ZOOKEEPER_JARS -Djava.security.auth.login.config=JAAS
// -Djava.security.krb5.conf=KRB5CONF KerberosClient.java CONNECT COMMAND ARGS...
// Commands: whoami (WHO scheme:id per identity), get PATH (DATA text), create PATH DATA SASL_ID (CREATED
// path; ACL sasl:SASL_ID with every permission). A ZooKeeper error prints ERROR <code name>; a refused
// login AUTHFAILED; exit status 0 either way, 2 on a bad command line.
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
      System.err.println("usage: KerberosClient CONNECT whoami | get PATH | create PATH DATA SASL_ID");
      System.exit(2);
    }
    CountDownLatch done = new CountDownLatch(1);
    AtomicReference<KeeperState> outcome = new AtomicReference<>();
    ZooKeeper zk = new ZooKeeper(args[0], 10000, event -> {
      KeeperState s = event.getState();
      if (s == KeeperState.SaslAuthenticated || s == KeeperState.AuthFailed) {
        outcome.compareAndSet(null, s);
        done.countDown();
      }
    });
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
}
