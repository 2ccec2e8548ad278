/**
 * The script's stdout and stderr (src/runtime/io/process-io.ts): blocking writes on the
 * descriptors, the streams only from the first failed write on, with no byte lost or reordered.
 */
import { PassThrough } from "node:stream";

import { FdWriter } from "../../src/runtime/io/process-io";

describe("FdWriter", () => {
  const eagainError = () => Object.assign(new Error("EAGAIN: resource temporarily unavailable, write"), { code: "EAGAIN" });

  /** A descriptor that takes at most `max` bytes per call, and fails after `failAfter` calls. */
  function descriptor(max: number, failAfter = Infinity) {
    const written: Buffer[] = [];
    let calls = 0;
    const writeChunk = (_fd: number, bytes: Buffer, offset: number): number => {
      if (++calls > failAfter) throw eagainError();
      const piece = bytes.subarray(offset, offset + max);
      written.push(Buffer.from(piece));
      return piece.length;
    };
    return { writeChunk, text: () => Buffer.concat(written).toString("utf8") };
  }

  test("writes everything through short writes, and never opens the stream", () => {
    const fd = descriptor(3);
    const writer = new FdWriter(
      2,
      () => {
        throw new Error("the stream must not be opened");
      },
      fd.writeChunk,
    );
    writer.write("gpucloud: logged in as ci\n");
    writer.write("naïve ✓\n");
    expect(fd.text()).toBe("gpucloud: logged in as ci\nnaïve ✓\n");
    let flushed = false;
    writer.flush(() => (flushed = true));
    expect(flushed).toBe(true);
  });

  test("after EAGAIN the stream gets the rest and everything after, in order", async () => {
    const fd = descriptor(4, 2);
    const stream = new PassThrough();
    const received: Buffer[] = [];
    stream.on("data", (c: Buffer) => received.push(c));
    const writer = new FdWriter(1, () => stream, fd.writeChunk);
    writer.write('{"id":"tok_1",');
    writer.write('"name":"ci"}\n');
    expect(fd.text()).toBe('{"id":"t'); // two calls of 4 bytes, then EAGAIN
    await new Promise<void>((resolve) => writer.flush(resolve));
    expect(fd.text() + Buffer.concat(received).toString("utf8")).toBe('{"id":"tok_1","name":"ci"}\n');
  });
});
