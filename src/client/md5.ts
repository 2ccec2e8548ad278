/**
 * MD5 (RFC 1321) of a string's UTF-8 bytes, as 32 lower-case hex digits.
 *
 * Why not node:crypto: loading it costs a process some time (its modules for keys, ciphers and
 * webcrypto), and a flavor lookup's read, which logs in, needs nothing else of it; the md5 of a
 * password takes microseconds. test/client/md5.test.ts checks it against node:crypto. MD5 here is
 * the API's login format, not a security measure of this library.
 */

/** Per-round left-rotation amounts: four for each of the four rounds. */
const SHIFTS = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21];
/** The sine table of the RFC: floor(|sin(i + 1)| * 2^32). */
const SINES = Array.from({ length: 64 }, (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32) | 0);

export function md5HexOfUtf8(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  // The message, a 1 bit, zeros, and its length in bits (64-bit little-endian), in 64-byte blocks.
  const blocks = ((bytes.length + 8) >>> 6) + 1;
  const message = new Uint8Array(blocks * 64);
  message.set(bytes);
  message[bytes.length] = 0x80;
  const view = new DataView(message.buffer);
  view.setUint32(message.length - 8, (bytes.length * 8) >>> 0, true);
  view.setUint32(message.length - 4, Math.floor(bytes.length / 2 ** 29), true);

  let h0 = 0x67452301;
  let h1 = 0xefcdab89 | 0;
  let h2 = 0x98badcfe | 0;
  let h3 = 0x10325476;
  const words = new Int32Array(16);
  for (let block = 0; block < blocks; block++) {
    for (let w = 0; w < 16; w++) words[w] = view.getInt32(block * 64 + w * 4, true);
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    for (let i = 0; i < 64; i++) {
      const round = i >>> 4;
      let f: number;
      let g: number;
      if (round === 0) {
        f = (b & c) | (~b & d);
        g = i;
      } else if (round === 1) {
        f = (d & b) | (~d & c);
        g = (5 * i + 1) & 15;
      } else if (round === 2) {
        f = b ^ c ^ d;
        g = (3 * i + 5) & 15;
      } else {
        f = c ^ (b | ~d);
        g = (7 * i) & 15;
      }
      const sum = (a + f + SINES[i]! + words[g]!) | 0;
      const shift = SHIFTS[round * 4 + (i & 3)]!;
      a = d;
      d = c;
      c = b;
      b = (b + ((sum << shift) | (sum >>> (32 - shift)))) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
  }

  const digest = new DataView(new ArrayBuffer(16));
  [h0, h1, h2, h3].forEach((h, i) => digest.setInt32(i * 4, h, true));
  return Buffer.from(digest.buffer).toString("hex");
}
