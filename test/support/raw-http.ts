import net from "node:net";

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes `request` byte for byte on a fresh TCP connection (so it can be
 * malformed HTTP: wrong Content-Length, bad chunking, broken request lines),
 * optionally half-closes, and reads the first response. A request should ask
 * for `Connection: close` when it is well-formed, so the server ends the answer
 * by closing; the answer is also taken as complete once Content-Length bytes arrived.
 */
export function rawRequest(
  port: number,
  request: Buffer | string,
  opts: { halfClose?: boolean; timeoutMs?: number } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) return reject(err);
      const answer = parse(Buffer.concat(chunks));
      if (!answer)
        return reject(new Error(`no HTTP answer; got ${JSON.stringify(Buffer.concat(chunks).toString())}`));
      resolve(answer);
    };
    const timer = setTimeout(() => finish(), opts.timeoutMs ?? 5_000);
    socket.on("connect", () => {
      socket.write(request);
      if (opts.halfClose) socket.end();
    });
    socket.on("data", (d: Buffer) => {
      chunks.push(d);
      const answer = parse(Buffer.concat(chunks));
      const length = answer ? Number(answer.headers["content-length"]) : Number.NaN;
      if (answer && Buffer.byteLength(answer.body) >= length) finish();
    });
    socket.on("end", () => finish());
    socket.on("error", (err) => (chunks.length ? finish() : finish(err)));
  });
}

function parse(raw: Buffer): RawAnswer | undefined {
  const text = raw.toString("utf8");
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const [statusLine = "", ...lines] = text.slice(0, end).split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  if (!status) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status, headers, body: text.slice(end + 4) };
}

/** A well-formed HTTP/1.1 request with the given body bytes. */
export function httpRequest(
  method: string,
  target: string,
  headers: Record<string, string>,
  body: Buffer | string = "",
): Buffer {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
  const head = Object.entries({
    host: "localhost",
    connection: "close",
    "content-length": String(bytes.length),
    ...headers,
  })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("");
  return Buffer.concat([Buffer.from(`${method} ${target} HTTP/1.1\r\n${head}\r\n`, "latin1"), bytes]);
}
