/** Whether `p` has settled once the callbacks pending now have run (for waits that must not resolve yet). */
export async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  const mark = () => {
    done = true;
  };
  void p.then(mark, mark);
  await new Promise((r) => setImmediate(r));
  return done;
}
