/** Waits until `ok` holds, checking every `everyMs`; fails naming `what` after `timeoutMs`. */
export async function until(
  what: string,
  ok: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
  everyMs = 100,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
