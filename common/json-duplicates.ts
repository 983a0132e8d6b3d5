interface Frame {
  /** Keys seen so far; undefined for an array. */
  keys: Set<string> | undefined;
  path: string;
  /** The object's current key, or the array's current index. */
  current: string;
  index: number;
}

/**
 * The first object key that appears twice in one object of a JSON text, as a
 * dotted path (`a.b[2].c`), or undefined. JSON.parse silently keeps the last
 * value, so two parsers could read the same body differently; bodies with a
 * repeated key are refused instead. The text must already be valid JSON.
 */
export function duplicateKey(text: string): string | undefined {
  const frames: Frame[] = [];
  let lastString = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      lastString = text.slice(i, j + 1);
      i = j;
      continue;
    }
    const frame = frames.at(-1);
    if (c === "{" || c === "[") {
      const path = !frame
        ? ""
        : frame.keys
          ? join(frame.path, frame.current)
          : `${frame.path}[${frame.index}]`;
      frames.push({ keys: c === "{" ? new Set() : undefined, path, current: "", index: 0 });
    } else if (c === "}" || c === "]") {
      frames.pop();
    } else if (c === ":" && frame?.keys) {
      const key = JSON.parse(lastString) as string;
      if (frame.keys.has(key)) return join(frame.path, key);
      frame.keys.add(key);
      frame.current = key;
    } else if (c === "," && frame && !frame.keys) {
      frame.index++;
    }
  }
  return undefined;
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
