/**
 * One object per (entity class, id) for as long as the application holds it:
 * entries are weak, so objects nobody references any more can be collected
 * and the map does not grow without bound.
 */
export class IdentityMap<T extends object> {
  private readonly byType = new Map<object, Map<string, WeakRef<T>>>();
  private readonly registry = new FinalizationRegistry<{ type: object; key: string }>(({ type, key }) => {
    const entries = this.byType.get(type);
    if (entries?.get(key)?.deref() === undefined) entries?.delete(key);
  });

  get(type: object, id: unknown): T | undefined {
    return this.byType.get(type)?.get(String(id))?.deref();
  }

  set(type: object, id: unknown, object: T): void {
    let entries = this.byType.get(type);
    if (!entries) {
      entries = new Map();
      this.byType.set(type, entries);
    }
    const key = String(id);
    entries.set(key, new WeakRef(object));
    this.registry.register(object, { type, key });
  }

  delete(type: object, id: unknown): void {
    this.byType.get(type)?.delete(String(id));
  }

  clear(): void {
    this.byType.clear();
  }

  /** Entries currently held (some may be waiting for collection). */
  get size(): number {
    let n = 0;
    for (const entries of this.byType.values()) n += entries.size;
    return n;
  }
}
