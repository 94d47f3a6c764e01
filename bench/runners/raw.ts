// Runner for the wire limit (raw-client.ts): same CLI and JSON line as the other runners.
import { main } from "./harness.ts";
import { driver } from "./raw-client.ts";

await main(driver, "node");
