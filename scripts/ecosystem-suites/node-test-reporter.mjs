// A node:test reporter for scripts/ecosystem-suites.mjs: each test's name (its suites' names
// before it) and its state, as JSON lines (--test-reporter-destination names the file).
export default async function* cogReporter(source) {
  const stacks = new Map();
  for await (const event of source) {
    const data = event.data ?? {};
    const stack = stacks.get(data.file) ?? [];
    stacks.set(data.file, stack);
    if (event.type === "test:start") stack[data.nesting] = data.name;
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    if (data.details?.type === "suite") continue;
    const name = [...stack.slice(0, data.nesting), data.name].join(" ");
    const state = data.skip || data.todo ? "skipped" : event.type === "test:pass" ? "passed" : "failed";
    const err = data.details?.error;
    yield (
      JSON.stringify({
        name,
        state,
        error:
          state === "failed"
            ? String(err?.cause?.message ?? err?.message ?? err)
                .split("\n")[0]
                .slice(0, 300)
            : undefined,
      }) + "\n"
    );
  }
}
