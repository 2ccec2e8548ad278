/**
 * The script's standard output and error as Terraform connects them (pipes), written with
 * blocking calls on fds 1 and 2 instead of through process.stdout and process.stderr: each of
 * those streams costs a run about a millisecond to set up on first use, and for pipes Node writes
 * them synchronously anyway. Where a write fails (EAGAIN on a non-blocking descriptor, say), the
 * stream takes over from that point, after what was already written.
 *
 * Standard input stays a stream: a blocking read would stop the event loop, and with it the
 * watchdog, for as long as the writer keeps stdin open.
 */
import { writeSync } from "node:fs";

/** The query on stdin, read to its end. */
export function readQuery(stream: NodeJS.ReadableStream = process.stdin): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    stream.on("error", reject);
  });
}

/** Writes `bytes` from `offset` on to `fd`; returns how many it wrote (possibly fewer). */
export type WriteChunk = (fd: number, bytes: Buffer, offset: number) => number;

/**
 * Writes to fd 1 or 2: blocking writes until one fails, then, in order, the stream. Where the
 * reader is gone (EPIPE), nothing more is written and `onClosed` is told once.
 */
export class FdWriter {
  private stream: NodeJS.WritableStream | undefined;
  private closed = false;

  constructor(
    private readonly fd: number,
    private readonly openStream: () => NodeJS.WritableStream,
    private readonly writeChunk: WriteChunk = (fd, bytes, offset) => writeSync(fd, bytes, offset),
    private readonly onClosed: () => void = () => undefined,
  ) {}

  write(text: string): void {
    if (this.closed) return;
    if (this.stream) {
      this.stream.write(text);
      return;
    }
    const bytes = Buffer.from(text, "utf8");
    let offset = 0;
    try {
      while (offset < bytes.length) offset += this.writeChunk(this.fd, bytes, offset);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EPIPE") {
        this.closed = true;
        this.onClosed();
        return;
      }
      // From now on the stream, so that nothing written later overtakes what it still holds.
      this.stream = this.openStream();
      this.stream.on("error", (e: NodeJS.ErrnoException) => {
        if (e.code !== "EPIPE" || this.closed) return;
        this.closed = true;
        this.onClosed();
      });
      this.stream.write(bytes.subarray(offset));
    }
  }

  /** Calls `done` once everything written so far has left the process. */
  flush(done: () => void): void {
    if (this.stream && !this.closed) this.stream.write("", done);
    else done();
  }
}
