// The native engine's table by request id (responses in flight, open WebSockets and tunnels), against a Map doing the same.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ByRequestId } from "../../src/engines/native/by-request-id.js";

/** A seeded generator, so a failure repeats. */
function random(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

describe("ByRequestId", () => {
  test("sets, gets and deletes by id; size counts entries", () => {
    const table = new ByRequestId<string>(4);
    table.set(1, "a");
    table.set(2, "b");
    table.set(1, "a again");
    assert.equal(table.size, 2);
    assert.equal(table.get(1), "a again");
    assert.equal(table.get(3), undefined);
    assert.equal(table.delete(1), true);
    assert.equal(table.delete(1), false);
    assert.equal(table.get(1), undefined);
    assert.equal(table.get(2), "b");
    assert.equal(table.size, 1);
  });

  test("ids that share a slot, deleted in any order, stay findable (backward shift across the wrap)", () => {
    const table = new ByRequestId<number>(8);
    // 5, 13, 21 share slot 5 (mask 7) and wrap past the end: 5, 6, 7, then 0.
    for (const id of [5, 13, 21, 29]) table.set(id, id * 10);
    assert.equal(table.delete(13), true);
    for (const id of [5, 21, 29]) assert.equal(table.get(id), id * 10, `id ${id}`);
    assert.equal(table.delete(5), true);
    assert.equal(table.get(29), 290);
    assert.equal(table.get(21), 210);
    assert.equal(table.size, 2);
  });

  test("ids past 2^32 (the engine counts requests in 64 bits, below 2^53)", () => {
    const table = new ByRequestId<string>();
    const big = 2 ** 40 + 7;
    table.set(big, "far");
    table.set(7, "near");
    assert.equal(table.get(big), "far");
    assert.equal(table.get(7), "near");
    assert.equal(table.delete(big), true);
    assert.equal(table.get(7), "near");
  });

  test("a burst grows it and its draining shrinks it, every entry findable throughout", () => {
    const next = random(7);
    const table = new ByRequestId<number>();
    const ids = Array.from({ length: 5000 }, (_, i) => 1000 + i);
    for (const id of ids) table.set(id, -id);
    const left = new Set(ids);
    // Drained in random order, down to three.
    for (const id of [...ids].sort(() => next() - 0.5).slice(0, ids.length - 3)) {
      assert.equal(table.delete(id), true);
      left.delete(id);
      if (left.size % 500 === 0) for (const kept of left) assert.equal(table.get(kept), -kept);
    }
    assert.equal(table.size, 3);
    for (const kept of left) assert.equal(table.get(kept), -kept);
    assert.equal(table.get(ids[0]! - 1), undefined);
  });

  test("agrees with a Map over 20,000 random operations, growing past its first capacity", () => {
    const next = random(42);
    const table = new ByRequestId<number>(4);
    const model = new Map<number, number>();
    let id = 1;
    for (let op = 0; op < 20_000; op++) {
      const r = next();
      if (r < 0.45 || model.size === 0) {
        // Mostly new sequential ids, as the engine hands them out; some far ones.
        const key = next() < 0.9 ? id++ : Math.floor(next() * 2 ** 45);
        table.set(key, op);
        model.set(key, op);
      } else {
        const keys = [...model.keys()];
        const key = next() < 0.9 ? keys[Math.floor(next() * keys.length)]! : id + 1000;
        assert.equal(table.delete(key), model.delete(key), `delete ${key} at ${op}`);
      }
      assert.equal(table.size, model.size);
      if (op % 97 === 0) for (const [key, value] of model) assert.equal(table.get(key), value, `get ${key} at ${op}`);
      if (op % 997 === 0) assert.deepEqual(table.values().sort(), [...model.values()].sort(), `values at ${op}`);
    }
    assert.ok(model.size > 4, `grew past the first capacity (${model.size} entries)`);
  });
});
