// Which memcached node holds a key: rendezvous (highest random weight) hashing.
// Every node gets a score hash(node address, key) and the highest score wins, so
// the choice depends only on the set of addresses, not on the order they were
// listed in (or returned by DNS), and adding or removing a node moves only the keys
// of that node. The hash is FNV-1a (32 bit) over the UTF-16 code units of
// `<host:port>`, a NUL and the key, finished with MurmurHash3's fmix32 for spread;
// a tie (practically never) goes to the lower address. Instances of this service
// agree on every key given the same addresses; the reference (Go, gomemcache)
// picks nodes differently, so do not mix the two on one memcached pool.

function fnv1a(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h;
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The score of `node` for `key`; exported for tests and tools that must agree with the service. */
export function nodeScore(node: string, key: string): number {
  return fmix32(fnv1a(fnv1a(0x811c9dc5, node), `\0${key}`));
}

/** The index in `nodes` of the node that holds `key` (-1 for an empty list). */
export function pickNode(key: string, nodes: readonly string[]): number {
  let best = -1;
  let bestScore = -1;
  for (let i = 0; i < nodes.length; i++) {
    const score = nodeScore(nodes[i]!, key);
    if (score > bestScore || (score === bestScore && nodes[i]! < nodes[best]!)) {
      best = i;
      bestScore = score;
    }
  }
  return best;
}
