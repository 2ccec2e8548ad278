import { Token } from "cdktf";

import { CDKTF_STRING_TOKEN, isCdktfToken, terraformLiteral } from "../../src/constructs/terraform-literal";

describe("terraformLiteral", () => {
  test("escapes template syntax in plain text", () => {
    expect(terraformLiteral("a ${b} %{c} $d %e")).toBe("a $${b} %%{c} $d %e");
  });

  test("leaves a cdktf token an expression and escapes only the text around it", () => {
    const token = Token.asString({ resolve: () => "x" });
    expect(isCdktfToken(token)).toBe(true);
    expect(terraformLiteral(`\${lit} ${token} %{lit}`)).toBe(`$\${lit} ${token} %%{lit}`);
  });

  test('a "$" right before a token is written as ${"$"}, not left to form the escape "$${"', () => {
    // Terraform reads "a${"$"}${x}" as "a$" followed by x (checked with terraform console).
    const token = Token.asString({ resolve: () => "x" });
    expect(terraformLiteral(`a$${token}`)).toBe(`a\${"$"}${token}`);
    expect(terraformLiteral(`a$ ${token}`)).toBe(`a$ ${token}`);
  });

  test("pinned: cdktf's string tokens are what CDKTF_STRING_TOKEN matches, and detection is cdktf's own", () => {
    const token = Token.asString({ resolve: () => "x" });
    const number = Token.asString(Token.asNumber({ resolve: () => 3 }));
    // If this fails, cdktf changed how it encodes a token in a string: update CDKTF_STRING_TOKEN.
    expect(`a ${token} b`.match(CDKTF_STRING_TOKEN)).toEqual([token]);
    for (const text of [token, number, `a-${token}`, "${not a token}", "%{x}", "plain"]) {
      expect(isCdktfToken(text)).toBe(Token.isUnresolved(text));
    }
    expect(isCdktfToken(42)).toBe(false);
  });
});
