// ESLint over Cog's TypeScript and JavaScript: ESLint's and typescript-eslint's recommended rules
// (syntax only: no type-aware rules, which would need a TypeScript program per run). `npm test`
// runs it (scripts/lint.mjs).
import { createRequire, Module } from "node:module";

// typescript-eslint (and ts-api-utils under it) parses with TypeScript's JavaScript API, which
// TypeScript 7 (the compiler that builds Cog, written in Go) does not have: in ESLint's process,
// "typescript" is TypeScript 6, installed under the name typescript-for-eslint.
const resolve = Module._resolveFilename;
const forEslint = createRequire(import.meta.url).resolve("typescript-for-eslint");
Module._resolveFilename = function (request, parent, ...rest) {
  if (request === "typescript") return forEslint;
  return resolve.call(this, request, parent, ...rest);
};
const { default: js } = await import("@eslint/js");
const { default: tseslint } = await import("typescript-eslint");

/** Node's globals, as the Node that runs ESLint has them, for the plain JavaScript files. */
const nodeGlobals = Object.fromEntries(Object.getOwnPropertyNames(globalThis).map((name) => [name, "readonly"]));

export default tseslint.config(
  { ignores: [".cache/", "dist/", "coverage/", "native/", "npm/", "prebuilds/", "types/", "bench/results/", "**/node_modules/"] },
  { linterOptions: { reportUnusedDisableDirectives: "error" } },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // A leading underscore names a parameter or binding kept for its position or to leave it out of a rest.
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true }],
      // An interface that only extends one type is how an app (or Cog) merges members into it.
      "@typescript-eslint/no-empty-object-type": ["error", { allowInterfaces: "with-single-extends" }],
      // HTTP's grammar is about control characters: the header and log checks match them on purpose.
      "no-control-regex": "off",
      // A failed best-effort step (a cleanup, a probe) is ignored on purpose where it says so.
      "no-empty": ["error", { allowEmptyCatch: true }],
      // A `let` read by a cleanup registered before it is assigned stays a `let`.
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
      // Startup errors restate the cause in Cog's words; adding `cause` changes what they print, a change of its own.
      "preserve-caught-error": "off",
    },
  },
  {
    files: ["**/*.js", "**/*.mjs", "**/*.cjs"],
    languageOptions: {
      globals: { ...nodeGlobals, require: "readonly", module: "writable", exports: "writable", __dirname: "readonly", __filename: "readonly" },
    },
  },
  // CommonJS on purpose: the CommonJS entry's checks, and the Express and ecosystem suites' servers.
  { files: ["**/*.cjs", "test/fixtures/jest-app/**"], rules: { "@typescript-eslint/no-require-imports": "off" } },
  {
    files: ["test/fixtures/jest-app/**"],
    languageOptions: {
      globals: {
        describe: "readonly",
        test: "readonly",
        expect: "readonly",
        beforeAll: "readonly",
        afterAll: "readonly",
        beforeEach: "readonly",
        afterEach: "readonly",
        jest: "readonly",
      },
    },
  },
  { files: ["bench/**"], languageOptions: { globals: { Bun: "readonly" } } },
  // The Express face mirrors Express 5's own API, whose request, response and app are untyped
  // (`any` in @types/express too); tests reach into internals and third-party callbacks.
  { files: ["src/express/**", "test/**"], rules: { "@typescript-eslint/no-explicit-any": "off" } },
);
