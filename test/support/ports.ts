import { createServer } from "node:net";

const handedOut = new Set<number>();

/**
 * The ports this process takes from, so that processes running at once never pick the same
 * port between one's probe and its bind: a --parallel worker (mocha sets MOCHA_WORKER_ID)
 * takes one of three slices of 10000-17499 by its id; a process that runs beside such
 * workers (scripts/test.sh sets TEST_PORTS_BESIDE_WORKERS=1 for the production-server half)
 * takes 17500-19999; any other process all of 10000-19999.
 */
const PORTS = (() => {
  const worker = process.env.MOCHA_WORKER_ID;
  if (worker !== undefined) return { from: 10_000 + (Number(worker) % 3) * 2_500, size: 2_500 };
  if (process.env.TEST_PORTS_BESIDE_WORKERS === "1") return { from: 17_500, size: 2_500 };
  return { from: 10_000, size: 10_000 };
})();

/**
 * A TCP port free on loopback right now, for a server a test starts later. Taken from
 * 10000-19999, below Linux's ephemeral range (32768+): a port the kernel handed out
 * would be free now and may be an outgoing connection's local port by the time the
 * server binds it (a stack test failed so). Never the same port twice in one process;
 * 20000+ is left to the Temporal server's port blocks (temporal.ts).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 1000; attempt++) {
    const port = PORTS.from + Math.floor(Math.random() * PORTS.size);
    if (handedOut.has(port) || !(await portIsFree(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free loopback port in ${PORTS.from}-${PORTS.from + PORTS.size - 1}`);
}

/** Whether `port` on loopback can be bound right now. */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
