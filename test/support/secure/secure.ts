// Test material for secure servers: throwaway certificates (openssl, RSA 2048, 7 days) and JAAS
// files, in the shapes verified against a ZooKeeper 3.8.0 server.
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface Certificates {
  readonly dir: string;
  /** The CA that signed the server and client certificates. */
  readonly caCert: string;
  readonly caKey: string;
  /** A second CA that signed nothing here except `strangerCert`: for "wrong CA" tests. */
  readonly otherCaCert: string;
  /** SAN IP:127.0.0.1 and DNS:localhost, CN=localhost. */
  readonly serverCert: string;
  readonly serverKey: string;
  /** PEM keystore for the server: PKCS#8 key then certificate. */
  readonly serverKeystore: string;
  /** Subject CN=zk-ts-client,O=zk-test; ZooKeeper's x509 id is "O=zk-test,CN=zk-ts-client". */
  readonly clientCert: string;
  readonly clientKey: string;
  /** client key + cert, the Java client's PEM keystore. */
  readonly clientKeystore: string;
  /** A client certificate signed by the other CA. */
  readonly strangerCert: string;
  readonly strangerKey: string;
  /** The client certificate's identity as ZooKeeper's X509AuthenticationProvider reports it. */
  readonly clientX509Id: string;
}

function openssl(dir: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile("openssl", args, { cwd: dir }, (err, _out, stderr) => {
      if (err) reject(new Error(`openssl ${args[0]} failed: ${err.message}\n${stderr}`));
      else resolve();
    });
  });
}

const CA_EXT = ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"];
const LEAF = "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n";

async function selfSignedCa(dir: string, name: string, cn: string): Promise<void> {
  await openssl(dir, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`, "-out", `${name}.crt`,
    "-days", "7", "-subj", `/CN=${cn}`, ...CA_EXT]);
}

async function leaf(dir: string, name: string, subj: string, ca: string, ext: string): Promise<void> {
  writeFileSync(join(dir, `${name}.ext`), ext);
  await openssl(dir, ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subj]);
  await openssl(dir, ["x509", "-req", "-in", `${name}.csr`, "-CA", `${ca}.crt`, "-CAkey", `${ca}.key`, "-CAcreateserial",
    "-out", `${name}.crt`, "-days", "7", "-extfile", `${name}.ext`]);
}

/** Writes a CA, an unrelated CA, and server/client/stranger certificates into `dir` (which must exist). */
export async function makeCertificates(dir: string): Promise<Certificates> {
  await Promise.all([selfSignedCa(dir, "ca", "zk-test-ca"), selfSignedCa(dir, "other-ca", "zk-other-ca")]);
  // Leaves in sequence per CA: -CAcreateserial writes the CA's .srl file.
  await Promise.all([
    (async () => {
      await leaf(dir, "server", "/CN=localhost", "ca",
        `subjectAltName=IP:127.0.0.1,DNS:localhost\n${LEAF}extendedKeyUsage=serverAuth,clientAuth\n`);
      await leaf(dir, "client", "/CN=zk-ts-client/O=zk-test", "ca", `${LEAF}extendedKeyUsage=clientAuth\n`);
    })(),
    leaf(dir, "stranger", "/CN=zk-stranger/O=zk-test", "other-ca", `${LEAF}extendedKeyUsage=clientAuth\n`),
  ]);
  const p = (f: string): string => join(dir, f);
  const cat = (out: string, ...files: string[]): void => writeFileSync(p(out), files.map((f) => readFileSync(p(f), "utf8")).join(""));
  cat("server-keystore.pem", "server.key", "server.crt");
  cat("client-keystore.pem", "client.key", "client.crt");
  return {
    dir,
    caCert: p("ca.crt"), caKey: p("ca.key"), otherCaCert: p("other-ca.crt"),
    serverCert: p("server.crt"), serverKey: p("server.key"), serverKeystore: p("server-keystore.pem"),
    clientCert: p("client.crt"), clientKey: p("client.key"), clientKeystore: p("client-keystore.pem"),
    strangerCert: p("stranger.crt"), strangerKey: p("stranger.key"),
    clientX509Id: "O=zk-test,CN=zk-ts-client",
  };
}

/** node:tls options (PEM strings) for a client: CA only, or mutual TLS with the client cert. */
export function clientTlsOptions(certs: Certificates, who: "ca-only" | "client" | "stranger" | "wrong-ca" = "ca-only"):
  { ca: string; cert?: string; key?: string } {
  const read = (f: string): string => readFileSync(f, "utf8");
  if (who === "wrong-ca") return { ca: read(certs.otherCaCert) };
  const ca = read(certs.caCert);
  if (who === "client") return { ca, cert: read(certs.clientCert), key: read(certs.clientKey) };
  if (who === "stranger") return { ca, cert: read(certs.strangerCert), key: read(certs.strangerKey) };
  return { ca };
}

/** Two generations of certificates, and the files a rotation test replaces on disk (issue 42). */
export interface RotatingCertificates {
  readonly gen1: Certificates;
  readonly gen2: Certificates;
  /** gen1's names, except the server's keystore and CA: files of `dir/server`, replaced by install(). */
  readonly live: Certificates;
  /** The client's files in `dir/client` (ca.crt, client.crt, client.key), replaced by install(). */
  readonly client: { readonly dir: string; readonly caFile: string; readonly certFile: string; readonly keyFile: string };
  /** Puts a generation's material in place: the server's keystore and trust store, and the client's three files. */
  install(g: Certificates): void;
}

/** Makes two generations under `root` (which must exist) and installs the first. */
export async function rotatingCertificates(root: string): Promise<RotatingCertificates> {
  for (const d of ["gen1", "gen2", "server", "client"]) mkdirSync(join(root, d));
  const [gen1, gen2] = await Promise.all([makeCertificates(join(root, "gen1")), makeCertificates(join(root, "gen2"))]);
  const live = { ...gen1, serverKeystore: join(root, "server", "keystore.pem"), caCert: join(root, "server", "ca.crt") };
  const dir = join(root, "client");
  const client = { dir, caFile: join(dir, "ca.crt"), certFile: join(dir, "client.crt"), keyFile: join(dir, "client.key") };
  const install = (g: Certificates): void => {
    copyFileSync(g.serverKeystore, live.serverKeystore);
    copyFileSync(g.caCert, live.caCert);
    copyFileSync(g.caCert, client.caFile);
    copyFileSync(g.clientCert, client.certFile);
    copyFileSync(g.clientKey, client.keyFile);
  };
  install(gen1);
  return { gen1, gen2, live, client, install };
}

// JAAS config files are read by a StreamTokenizer: quoted values honour backslash escapes, and a
// user name becomes part of the option key `user_<name>`, so keep names to plain word characters.
const jaasQuote = (s: string): string => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

export interface JaasOptions {
  /** name → password, one `user_<name>` entry each in the Server section. */
  readonly users: Readonly<Record<string, string>>;
  /** Also write a Client section, for the Java client (section name "Client"). */
  readonly client?: { readonly username: string; readonly password: string };
}

/** JAAS file content for a ZooKeeper server with SASL DIGEST-MD5 users. */
export function saslJaas(opts: JaasOptions): string {
  const users = Object.entries(opts.users);
  if (users.length === 0) throw new Error("saslJaas: at least one user is needed");
  for (const [name] of users) {
    if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`saslJaas: user name ${JSON.stringify(name)} must be [A-Za-z0-9_]+`);
  }
  const entries = users.map(([name, pw]) => `  user_${name}=${jaasQuote(pw)}`).join("\n");
  let out = `Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n${entries};\n};\n`;
  if (opts.client) {
    out += `Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n` +
      `  username=${jaasQuote(opts.client.username)}\n  password=${jaasQuote(opts.client.password)};\n};\n`;
  }
  return out;
}
