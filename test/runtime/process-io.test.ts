/**
 * The script's stdin, stdout and stderr (src/runtime/process-io.ts): blocking calls on the
 * descriptors, the streams only from the first EAGAIN on, with no byte lost or reordered.
 */
import { PassThrough } from "node:stream";
import { FdWriter, readQuery } from "../../src/runtime/process-io";

describe("readQuery", () => {
  /** A reader of fd 0 that returns `pieces` in turn, then `end` (0 for end of input, or an error). */
  function reader(pieces: Array<string | Buffer>, end: number | Error) {
    const queue = pieces.map((p) => (typeof p === "string" ? Buffer.from(p) : p));
    return (buffer: Buffer): number => {
      const next = queue.shift();
      if (next === undefined) {
        if (end instanceof Error) throw end;
        return end;
      }
      next.copy(buffer);
      return next.length;
    };
  }
  const eagain = Object.assign(new Error("EAGAIN: resource temporarily unavailable, read"), { code: "EAGAIN" });

  test("reads fd 0 to its end without touching the stream", async () => {
    const text = await readQuery(reader(['{"name":', '"ci"}'], 0), () => {
      throw new Error("the stream must not be used");
    });
    expect(text).toBe('{"name":"ci"}');
  });

  test("on EAGAIN reads the rest from the stream, keeping what fd 0 gave, split characters included", async () => {
    const query = Buffer.from('{"name":"ünïcode"}');
    // Cut inside the two-byte "ü", so that decoding the pieces one by one would garble it.
    const cut = query.indexOf(Buffer.from("ü")) + 1;
    const stream = new PassThrough();
    const pending = readQuery(reader([query.subarray(0, cut)], eagain), () => stream);
    setTimeout(() => stream.end(query.subarray(cut)), 10);
    expect(await pending).toBe('{"name":"ünïcode"}');
  });
});

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
    const writer = new FdWriter(2, () => {
      throw new Error("the stream must not be opened");
    }, fd.writeChunk);
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
