// An API that is down, as the suites stage it: a loopback port where nothing listens.
import { createServer } from "node:net";

/** A loopback port nothing listens on: bound, noted, closed. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
