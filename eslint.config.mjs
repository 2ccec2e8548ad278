// ESLint for the TypeScript sources, tests and tools: typescript-eslint's recommended rules, plus the
// type-checked rules that find real bugs in code like ours (a promise nobody awaits, a promise where a
// callback is expected), and the import habits of the style notes: one import statement per module
// (a separate `import type` beside it allowed), types imported as types, one order
// (eslint-plugin-simple-import-sort: node: built-ins, packages, then relative paths, each sorted).
// Formatting is Prettier's (.prettierrc.json), not ESLint's.
import js from "@eslint/js";
import simpleImportSort from "eslint-plugin-simple-import-sort";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["lib/**", "lib-cdktn/**", "build/**", "cdktf.out/**", "node_modules/**", ".cache/**", "coverage/**", "**/*.js", "**/*.cjs", "**/*.mjs"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { project: "./tsconfig.dev.json", tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "simple-import-sort": simpleImportSort },
    rules: {
      "no-duplicate-imports": ["error", { includeExports: true, allowSeparateTypeImports: true }],
      "@typescript-eslint/consistent-type-imports": ["error", { prefer: "type-imports", fixStyle: "inline-type-imports" }],
      "simple-import-sort/imports": "error",
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
