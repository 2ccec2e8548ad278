/**
 * The client's suites again, sending with node:http (src/client/node-http-sender.ts), as the
 * script Terraform runs does: timeouts, retries, redaction, connection handling and error
 * classification must not depend on which HTTP library carries the bytes.
 */
import { sendWith } from "./helpers";

sendWith("node-http");
require("./client.test");
require("./emulator.test");
require("./fault-scenarios.test");
require("./transport.test");
