/**
 * The script's standard input, output and error as Terraform connects them (pipes), read and
 * written with blocking calls on fds 0, 1 and 2 instead of through process.stdin, process.stdout
 * and process.stderr: each of those streams costs a run 1 to 2 ms to set up on first use, and
 * for pipes Node writes them synchronously anyway. Where a descriptor is non-blocking (EAGAIN),
 * the stream takes over from that point, after what was already read or written.
 */
import { readSync, writeSync } from "node:fs";

/**
 * The query on stdin. Terraform's external provider writes it whole and closes stdin before it
 * waits for the program, so blocking reads of fd 0 get it; on EAGAIN the stream reads the rest.
 */
export function readQuery(
  readChunk: (buffer: Buffer) => number = (buffer) => readSync(0, buffer),
  stream: () => NodeJS.ReadableStream = () => process.stdin,
): Promise<string> {
  const chunks: Buffer[] = [];
  const buffer = Buffer.allocUnsafe(64 * 1024);
  try {
    for (let n = readChunk(buffer); n > 0; n = readChunk(buffer)) chunks.push(Buffer.from(buffer.subarray(0, n)));
  } catch {
    return readAll(stream(), chunks);
  }
  return Promise.resolve(Buffer.concat(chunks).toString("utf8"));
}

/** Reads `stream` to its end, after the bytes already in `chunks`. */
function readAll(stream: NodeJS.ReadableStream, chunks: Buffer[]): Promise<string> {
  return new Promise((resolve, reject) => {
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    stream.on("error", reject);
  });
}

/** Writes `bytes` from `offset` on to `fd`; returns how many it wrote (possibly fewer). */
export type WriteChunk = (fd: number, bytes: Buffer, offset: number) => number;

/** Writes to fd 1 or 2: blocking writes until one fails, then, in order, the stream. */
export class FdWriter {
  private stream: NodeJS.WritableStream | undefined;

  constructor(
    private readonly fd: number,
    private readonly openStream: () => NodeJS.WritableStream,
    private readonly writeChunk: WriteChunk = (fd, bytes, offset) => writeSync(fd, bytes, offset),
  ) {}

  write(text: string): void {
    if (this.stream) {
      this.stream.write(text);
      return;
    }
    const bytes = Buffer.from(text, "utf8");
    let offset = 0;
    try {
      while (offset < bytes.length) offset += this.writeChunk(this.fd, bytes, offset);
    } catch {
      // From now on the stream, so that nothing written later overtakes what it still holds.
      this.stream = this.openStream();
      this.stream.write(bytes.subarray(offset));
    }
  }

  /** Calls `done` once everything written so far has left the process. */
  flush(done: () => void): void {
    if (this.stream) this.stream.write("", done);
    else done();
  }
}
