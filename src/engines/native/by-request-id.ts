/**
 * Values by request id (the engine's events name a request, and a WebSocket or tunnel by its
 * upgrade request, by its id): the responses the app has not finished, the open WebSockets, the
 * open tunnels. A hash table of our own, open addressing over two arrays, rather than a `Map`.
 *
 * Why not a Map: one that lives as long as the server and takes and drops an entry per request
 * (or per connection) makes V8 promote what it held. Once the Map's table is in the old
 * generation (any full collection puts it there), every rehash (a Map rehashes after so many
 * deletions, growing or not) allocates the next table there too and leaves the old one holding
 * the entries it had; the young-generation collector counts every pointer from an old object as
 * alive, so the requests (or sockets) those dead tables still name, and all they reference,
 * survive into the old generation, and V8 runs full collections to reclaim them. A request
 * answered on a later tick than its dispatch (a body parser, any deferring middleware) is in
 * flight across ticks, so every such request paid for it (docs/decisions/deferred-answers.md);
 * so did every short-lived WebSocket and tunnel. Here every slot is cleared as its entry leaves,
 * and the arrays a growth replaces are emptied, so nothing dead points at what left.
 *
 * Linear probing with backward-shift deletion (no tombstones, so deletions never force a
 * rehash); ids are the engine's sequential request numbers, so their low bits spread well, and
 * the ids in flight at once sit in few runs: the arrays double past three quarters full (past
 * half, as they once did, 19,000 pending requests held two arrays of 65,536 slots: 55 bytes a
 * request) and halve below an eighth.
 */
export class ByRequestId<V> {
  /** Request ids by slot; EMPTY where none. */
  private ids: number[];
  private items: (V | undefined)[];
  private mask: number;
  size = 0;

  constructor(capacity = MIN_CAPACITY) {
    this.ids = new Array<number>(capacity).fill(EMPTY);
    this.items = new Array<V | undefined>(capacity).fill(undefined);
    this.mask = capacity - 1;
  }

  get(id: number): V | undefined {
    const ids = this.ids;
    const mask = this.mask;
    for (let i = slotOf(id, mask); ; i = (i + 1) & mask) {
      const at = ids[i]!;
      if (at === id) return this.items[i];
      if (at === EMPTY) return undefined;
    }
  }

  set(id: number, value: V): void {
    if ((this.size + 1) * 4 > this.ids.length * 3) this.resize(this.ids.length * 2);
    const ids = this.ids;
    const mask = this.mask;
    let i = slotOf(id, mask);
    for (; ids[i] !== EMPTY; i = (i + 1) & mask) {
      if (ids[i] === id) {
        this.items[i] = value;
        return;
      }
    }
    ids[i] = id;
    this.items[i] = value;
    this.size++;
  }

  /** Removes `id`'s entry; whether there was one. */
  delete(id: number): boolean {
    const ids = this.ids;
    const items = this.items;
    const mask = this.mask;
    let i = slotOf(id, mask);
    for (; ids[i] !== id; i = (i + 1) & mask) if (ids[i] === EMPTY) return false;
    // Backward shift: each entry after the hole that may sit in it (its home slot is not
    // between the hole and itself) moves into it, so lookups never meet a hole before their entry.
    for (let j = (i + 1) & mask; ids[j] !== EMPTY; j = (j + 1) & mask) {
      const home = slotOf(ids[j]!, mask);
      if (((j - home) & mask) >= ((j - i) & mask)) {
        ids[i] = ids[j]!;
        items[i] = items[j];
        i = j;
      }
    }
    ids[i] = EMPTY;
    items[i] = undefined;
    // After a burst (a flood of long polls), the arrays go back down as it drains.
    if (--this.size * 8 < ids.length && ids.length > MIN_CAPACITY) this.resize(ids.length / 2);
    return true;
  }

  /** The values, in no order (a copy: for a shutdown, which may delete while it goes). */
  values(): V[] {
    const all: V[] = [];
    for (let i = 0; i < this.ids.length; i++) if (this.ids[i] !== EMPTY) all.push(this.items[i]!);
    return all;
  }

  private resize(capacity: number): void {
    const { ids, items } = this;
    this.ids = new Array<number>(capacity).fill(EMPTY);
    this.items = new Array<V | undefined>(capacity).fill(undefined);
    this.mask = capacity - 1;
    this.size = 0;
    for (let i = 0; i < ids.length; i++) if (ids[i] !== EMPTY) this.set(ids[i]!, items[i]!);
    // The replaced arrays may be in the old generation: emptied, they name no request.
    items.fill(undefined);
  }
}

const EMPTY = -1;
const MIN_CAPACITY = 16;

/** A slot for `id`: its low bits (ids are below 2^53; `>>> 0` keeps the low 32 of an integer). */
function slotOf(id: number, mask: number): number {
  return (id >>> 0) & mask;
}
