import { Token } from "cdktf";
import { isCdktfToken, terraformLiteral } from "../../src/constructs/terraform-literal";

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
});
