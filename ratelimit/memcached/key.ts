// memcached's rules for keys in the text protocol: at most 250 bytes, and no
// whitespace or control characters (they would split or end the command line).
// Checked before anything is sent, so a bad request changes no counter.

import { CacheKeyError } from "../limiter/counter-store.js";

export const MEMCACHE_MAX_KEY_BYTES = 250;

const show = (key: string) => JSON.stringify(key.length > 60 ? `${key.slice(0, 60)}…` : key);

/** Throws CacheKeyError naming the key and the broken rule. */
export function checkMemcacheKey(key: string): void {
  let ascii = true;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    // ASCII space and controls, DEL, and the C1 controls; other non-ASCII characters are fine.
    if (c <= 0x20 || c === 0x7f || (c >= 0x80 && c <= 0x9f)) {
      const code = `U+${c.toString(16).toUpperCase().padStart(4, "0")}`;
      throw new CacheKeyError(
        `cache key ${show(key)} contains whitespace or a control character (${code} at index ${i}): descriptors sent to the memcached backend must not`,
      );
    }
    if (c >= 0x80) ascii = false;
  }
  const bytes = ascii ? key.length : Buffer.byteLength(key);
  if (bytes > MEMCACHE_MAX_KEY_BYTES) {
    throw new CacheKeyError(
      `cache key ${show(key)} is ${bytes} bytes long; memcached keys are limited to ${MEMCACHE_MAX_KEY_BYTES} (shorten the descriptors or CACHE_KEY_PREFIX)`,
    );
  }
}
