import { createHash } from "node:crypto";

import { md5Hex } from "../../src/client";
import { md5HexOfUtf8 } from "../../src/client/md5";

const reference = (text: string) => createHash("md5").update(text, "utf8").digest("hex");

describe("md5HexOfUtf8 (no node:crypto)", () => {
  test("the RFC 1321 test suite", () => {
    expect(md5HexOfUtf8("")).toBe("d41d8cd98f00b204e9800998ecf8427e");
    expect(md5HexOfUtf8("a")).toBe("0cc175b9c0f1b6a831c399e269772661");
    expect(md5HexOfUtf8("abc")).toBe("900150983cd24fb0d6963f7d28e17f72");
    expect(md5HexOfUtf8("message digest")).toBe("f96b697d7cb7938d525a2f31aaf161d0");
    expect(md5HexOfUtf8("abcdefghijklmnopqrstuvwxyz")).toBe("c3fcd3d76192e4007dfb496cca67e13b");
    expect(md5HexOfUtf8("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")).toBe("d174ab98d277d9f5a5611c2c9f419d9f");
    expect(md5HexOfUtf8("1234567890".repeat(8))).toBe("57edf4a22be3c955ac49da2e2107b67a");
  });

  test("agrees with node:crypto on every length around the block boundaries, and on UTF-8", () => {
    for (let n = 0; n <= 200; n++) {
      const text = Array.from({ length: n }, (_, i) => String.fromCharCode(32 + ((i * 7 + n) % 95))).join("");
      expect([n, md5HexOfUtf8(text)]).toEqual([n, reference(text)]);
    }
    for (const text of ["pässwörd", "密码", "🔑🚀", "\u0000\u00ff", "x".repeat(100_000), "é".repeat(1_000)]) {
      expect(md5HexOfUtf8(text)).toBe(reference(text));
    }
  });

  test("agrees with node:crypto on 2,000 random strings", () => {
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) >>> 0) / 2 ** 32;
    for (let k = 0; k < 2_000; k++) {
      const text = Array.from({ length: Math.floor(random() * 150) }, () =>
        String.fromCodePoint(Math.floor(random() ** 3 * 0x2ffff) % 0xd800),
      ).join("");
      expect(md5HexOfUtf8(text)).toBe(reference(text));
    }
  });

  test("md5Hex, the client's public helper, is it", () => {
    expect(md5Hex("password")).toBe("5f4dcc3b5aa765d61d8327deb882cf99");
  });
});
