// Apache Curator SharedCount, DistributedBarrier and DistributedDoubleBarrier, driven by recipes-curator.test.ts
// on the same paths as zookeeper-ts's recipes. One line per fact on stdout; commands on stdin.
// Usage: CuratorRecipes <connectString> <recipe> <path> [args...]
//   count <n>             n increments of 1 by trySetCount on the last value read -> DONE <value after the last one>
//   barrier-set           setBarrier()                                          -> DONE
//   barrier-remove        removeBarrier()                                       -> DONE
//   barrier-wait          waitOnBarrier(100 ms) while up, then waitOnBarrier()  -> UP, then CLEARED
//   double <size>         enter(); stdin "leave" -> leave()                      -> ENTERED, LEFT
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.curator.retry.RetryNTimes;

public class CuratorRecipes {
    static synchronized void emit(String line) {
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        String hosts = args[0], recipe = args[1], path = args[2];
        CuratorFramework client = CuratorFrameworkFactory.newClient(hosts, 10000, 10000, new RetryNTimes(10, 100));
        client.start();
        client.blockUntilConnected();
        try {
            switch (recipe) {
                case "count": {
                    SharedCount count = new SharedCount(client, path, 0);
                    count.start();
                    int last = 0;
                    for (int i = 0, n = Integer.parseInt(args[3]); i < n; ) {
                        VersionedValue<Integer> now = count.getVersionedValue();
                        if (count.trySetCount(now, now.getValue() + 1)) {
                            last = now.getValue() + 1;
                            i++;
                        }
                    }
                    count.close();
                    emit("DONE " + last);
                    break;
                }
                case "barrier-set":
                    new DistributedBarrier(client, path).setBarrier();
                    emit("DONE");
                    break;
                case "barrier-remove":
                    new DistributedBarrier(client, path).removeBarrier();
                    emit("DONE");
                    break;
                case "barrier-wait": {
                    DistributedBarrier barrier = new DistributedBarrier(client, path);
                    if (barrier.waitOnBarrier(100, TimeUnit.MILLISECONDS)) {
                        emit("ERROR the barrier was down");
                        break;
                    }
                    emit("UP");
                    emit(barrier.waitOnBarrier(30, TimeUnit.SECONDS) ? "CLEARED" : "ERROR not cleared within 30 s");
                    break;
                }
                case "double": {
                    DistributedDoubleBarrier barrier = new DistributedDoubleBarrier(client, path, Integer.parseInt(args[3]));
                    emit(barrier.enter(30, TimeUnit.SECONDS) ? "ENTERED" : "ERROR not entered within 30 s");
                    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
                    for (String line; (line = in.readLine()) != null; ) {
                        if (line.trim().equals("leave")) {
                            emit(barrier.leave(30, TimeUnit.SECONDS) ? "LEFT" : "ERROR not left within 30 s");
                            break;
                        }
                    }
                    break;
                }
                default:
                    emit("ERROR unknown recipe " + recipe);
            }
        } catch (Exception e) {
            emit("ERROR " + e);
        } finally {
            client.close();
        }
    }
}
