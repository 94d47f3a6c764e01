// What a test server says the same way on every back end: where it listens (127.0.0.1), its four-letter
// words and the end of its server.log. LocalServer (zk-local.ts) and DockerServer (zk-docker.ts) extend it
// with how they run (a JVM, a container).
import { fourLetterWord, serverMode } from "./four-letter.ts";
import { serverLogTail } from "./server-log.ts";
import { until } from "../wait.ts";

export abstract class ServerEndpoint {
  readonly host = "127.0.0.1";
  readonly clientPort: number;
  readonly connectString: string;
  readonly dir: string; // its temp dir (zoo.cfg, data, server.log)
  readonly extraPorts: readonly number[];

  constructor(clientPort: number, dir: string, extraPorts: readonly number[]) {
    this.clientPort = clientPort;
    this.connectString = `127.0.0.1:${clientPort}`;
    this.dir = dir;
    this.extraPorts = extraPorts;
  }

  /** Its `srvr` Mode: ("standalone", "leader", "follower", "read-only"), or null when it does not serve. */
  mode(): Promise<string | null> {
    return serverMode(this.host, this.clientPort);
  }

  fourLetter(cmd: string): Promise<string> {
    return fourLetterWord(this.host, this.clientPort, cmd, 1000);
  }

  logTail(lines = 40): string {
    return serverLogTail(this.dir, lines);
  }

  /** Polls `srvr` until it shows a Mode: line ("serving"), `gone()` says the server ended ("gone"), or `timeoutMs` passes ("timeout"). */
  protected serving(timeoutMs: number, gone: () => boolean = () => false): Promise<"serving" | "gone" | "timeout"> {
    let seen: "serving" | "gone" | null = null;
    const check = async (): Promise<boolean> => {
      if (gone()) seen = "gone";
      else if ((await this.mode()) !== null) seen = "serving";
      return seen !== null;
    };
    return until("a Mode: line from srvr", check, timeoutMs, 100).then(() => seen ?? "serving", () => "timeout" as const);
  }
}
