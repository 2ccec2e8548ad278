// ESLint for the TypeScript sources, tests and tools: typescript-eslint's recommended rules, plus the
// type-checked rules that find real bugs in code like ours (a promise nobody awaits, a promise where a
// callback is expected). Formatting is Prettier's (.prettierrc.json), not ESLint's.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["lib/**", "lib-cdktn/**", "build/**", "cdktf.out/**", "node_modules/**", ".cache/**", "coverage/**", "**/*.js", "**/*.cjs", "**/*.mjs"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { project: "./tsconfig.dev.json", tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/await-thenable": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" }],
    },
  },
  {
    // Tests read synthesized JSON and bench metafiles, whose shapes are not typed, and take Node's
    // module objects with require() to spy on their functions.
    files: ["test/**/*.ts", "tools/bench/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off", "@typescript-eslint/no-require-imports": "off" },
  },
);
