/**
 * A list of long-lived things that come and go often (an app's open event streams, the
 * responses `handlerTimeout` watches): doubly linked through its entries, which extend `Linked`,
 * so that one leaves in constant time and the list needs no object of its own per entry.
 *
 * Why not a Set or a Map: one that lives as long as the server and takes and drops an entry per
 * connection, stream or request makes V8 promote what it held. Once its table is in the old
 * generation (any full collection puts it there), every rehash (after so many deletions, growing
 * or not) allocates the next table there too and leaves the old one holding the entries it had;
 * the young-generation collector counts every pointer from an old object as alive, so the closed
 * sockets and streams those dead tables still name, and all they reference, survive into the old
 * generation, and V8 runs full collections to reclaim them (docs/decisions/deferred-answers.md).
 * Here there is no table: an entry that leaves is unlinked and its links emptied, so nothing in
 * the list points at it, and it points at nothing in the list.
 */
export class LinkedList<L extends Linked<L>> {
  /** The oldest entry (null when empty). */
  first: L | null = null;
  private last: L | null = null;
  size = 0;

  /** Adds `entry` at the end. */
  add(entry: L): void {
    entry.prev = this.last;
    if (this.last === null) this.first = entry;
    else this.last.next = entry;
    this.last = entry;
    this.size++;
  }

  /** Takes `entry` out (nothing if it is not in), and empties its links. */
  remove(entry: L): void {
    const { prev, next } = entry;
    if (prev === null) {
      if (this.first !== entry) return;
      this.first = next;
    } else prev.next = next;
    if (next === null) this.last = prev;
    else next.prev = prev;
    entry.prev = entry.next = null;
    this.size--;
  }

  /** Takes every entry out. */
  clear(): void {
    while (this.first !== null) this.remove(this.first);
  }

  /** The entries, oldest first, as they are now (a copy: what they are used for, a shutdown, may remove them). */
  [Symbol.iterator](): IterableIterator<L> {
    const entries: L[] = [];
    for (let entry = this.first; entry !== null; entry = entry.next) entries.push(entry);
    return entries[Symbol.iterator]();
  }
}

/** What a LinkedList holds: an entry's links to its neighbours (both null while it is not in one). */
export class Linked<L extends Linked<L>> {
  prev: L | null = null;
  next: L | null = null;
}
