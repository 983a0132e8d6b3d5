// How numbers and times read on the page.
export const percent = (rate: number | null | undefined) =>
  rate === null || rate === undefined ? "—" : `${(rate * 100).toFixed(rate === 1 ? 0 : 1)} %`;

export const ms = (value: number | undefined) => (value === undefined ? "—" : `${value} ms`);

// Times in the browser's zone, always with the zone named ("Dec 5, 2025, 2:03:12 PM GMT+1"):
// a time without its zone is read in whatever zone the reader assumes.
const ABSOLUTE = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "long" });

export const when = (iso: string | undefined) => (iso ? ABSOLUTE.format(new Date(iso)) : "—");

export const pretty = (text: string) => {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
};

/** A fresh key per user action, for the routes that require Idempotency-Key. */
export const actionKey = (what: string) => `portal-${what}-${crypto.randomUUID()}`;
