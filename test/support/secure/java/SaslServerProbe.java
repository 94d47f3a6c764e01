// The JDK's own DIGEST-MD5 SASL server (the one ZooKeeper's server uses), driven over stdin/stdout
// so tests can check a client mechanism against it. Lines: "CHALLENGE <hex>" out, "<hex>" in,
// then "FINAL <hex>" + "AUTHORIZED <id>" or "ERROR <message>". Run: java SaslServerProbe.java
// USER_HEX PASSWORD_HEX [QOP] [SERVER_NAME], user and password as hex of their UTF-8 bytes (so
// non-ASCII survives any locale). Same names as ZooKeeper: protocol "zookeeper".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.sasl.AuthorizeCallback;
import javax.security.sasl.RealmCallback;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslServer;

public class SaslServerProbe {
  public static void main(String[] args) throws Exception {
    HexFormat hex = HexFormat.of();
    String user = new String(hex.parseHex(args[0]), StandardCharsets.UTF_8);
    String password = new String(hex.parseHex(args[1]), StandardCharsets.UTF_8);
    Map<String, String> props = new HashMap<>();
    if (args.length > 2 && !args[2].isEmpty()) props.put(Sasl.QOP, args[2]);
    String serverName = args.length > 3 ? args[3] : "zk-sasl-md5";
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    SaslServer server = Sasl.createSaslServer("DIGEST-MD5", "zookeeper", serverName, props, callbacks -> {
      String name = null;
      for (Callback cb : callbacks) {
        if (cb instanceof NameCallback nc) name = nc.getDefaultName();
        else if (cb instanceof PasswordCallback pc) {
          if (user.equals(name)) pc.setPassword(password.toCharArray());
        } else if (cb instanceof RealmCallback rc) rc.setText(rc.getDefaultText());
        else if (cb instanceof AuthorizeCallback ac) ac.setAuthorized(true);
      }
    });
    try {
      System.out.println("CHALLENGE " + hex.formatHex(server.evaluateResponse(new byte[0])));
      String line = in.readLine();
      byte[] fin = server.evaluateResponse(hex.parseHex(line == null ? "" : line.trim()));
      System.out.println("FINAL " + hex.formatHex(fin == null ? new byte[0] : fin));
      System.out.println("AUTHORIZED " + server.getAuthorizationID());
    } catch (Exception e) {
      System.out.println("ERROR " + e.getMessage());
    }
  }
}
