/**
 * A set of long-lived things that come and go often (an app's open event streams): a doubly
 * linked list whose links their holders keep, to leave it in constant time.
 *
 * Why not a Set or a Map: one that lives as long as the server and takes and drops an entry per
 * connection or stream makes V8 promote what it held. Once its table is in the old generation
 * (any full collection puts it there), every rehash (after so many deletions, growing or not)
 * allocates the next table there too and leaves the old one holding the entries it had; the
 * young-generation collector counts every pointer from an old object as alive, so the closed
 * sockets and streams those dead tables still name, and all they reference, survive into the old
 * generation, and V8 runs full collections to reclaim them (docs/decisions/deferred-answers.md).
 * Here there is no table: a link that leaves is unlinked and emptied, so nothing dead points at
 * what left.
 */
export class LinkedList<T> {
  private first: Link<T> | null = null;
  private last: Link<T> | null = null;
  size = 0;

  /** Adds `value` at the end; its link is what `remove` takes. */
  add(value: T): Link<T> {
    const link = new Link(value, this.last);
    if (this.last === null) this.first = link;
    else this.last.next = link;
    this.last = link;
    this.size++;
    return link;
  }

  /** Takes `link` out (nothing if it is out already), and empties it. */
  remove(link: Link<T>): void {
    if (link.value === null) return;
    const { prev, next } = link;
    if (prev === null) this.first = next;
    else prev.next = next;
    if (next === null) this.last = prev;
    else next.prev = prev;
    link.prev = link.next = null;
    link.value = null;
    this.size--;
  }

  /** Takes every link out. */
  clear(): void {
    while (this.first !== null) this.remove(this.first);
  }

  /** The values, oldest first, as they are now (a copy: what they are used for, a shutdown, may remove them). */
  [Symbol.iterator](): IterableIterator<T> {
    const values: T[] = [];
    for (let link = this.first; link !== null; link = link.next) values.push(link.value!);
    return values[Symbol.iterator]();
  }
}

/** An entry of a LinkedList: its value (null once it has left) and its neighbours. */
export class Link<T> {
  next: Link<T> | null = null;

  constructor(
    public value: T | null,
    public prev: Link<T> | null,
  ) {}
}
