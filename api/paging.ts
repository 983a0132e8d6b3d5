import { validation } from "./errors.js";

// Keyset pages: the cursor is the (time, id) of the last item of the previous
// page, so a page costs the same however deep it is and concurrent inserts
// never shift items between pages.

export const MAX_PAGE_SIZE = 1000;

export interface PageRequest {
  pageSize: number;
  after?: { at: Date; id: string };
}

export function readPage(
  query: Record<string, unknown>,
  defaultSize: number | undefined,
): PageRequest | undefined {
  const rawSize = query.pageSize as string | undefined;
  const rawCursor = query.cursor as string | undefined;
  if (rawSize === undefined && rawCursor === undefined && defaultSize === undefined) return undefined;
  const pageSize = rawSize === undefined ? (defaultSize ?? 100) : Number(rawSize);
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
    throw validation(`pageSize must be an integer from 1 to ${MAX_PAGE_SIZE}, got "${rawSize}"`);
  }
  if (rawCursor === undefined) return { pageSize };
  try {
    const { t, id } = JSON.parse(Buffer.from(rawCursor, "base64url").toString("utf8"));
    const at = new Date(t);
    if (typeof id !== "string" || Number.isNaN(at.getTime())) throw new Error("bad cursor");
    return { pageSize, after: { at, id } };
  } catch {
    throw validation("cursor is not a value this API returned as `next`");
  }
}

export const encodeCursor = (at: Date, id: string): string =>
  Buffer.from(JSON.stringify({ t: at.toISOString(), id })).toString("base64url");

/** Prisma filter for items strictly after the cursor in (field desc, id desc) order. */
export function afterCursor(field: string, page: PageRequest | undefined) {
  if (!page?.after) return {};
  const { at, id } = page.after;
  return { OR: [{ [field]: { lt: at } }, { [field]: at, id: { lt: id } }] };
}

/** Splits the one extra row fetched into "there is a next page". */
export function pageOf<T extends { id: string }>(
  rows: T[],
  page: PageRequest | undefined,
  at: (row: T) => Date,
): { items: T[]; next?: string } {
  if (!page || rows.length <= page.pageSize) return { items: rows };
  const items = rows.slice(0, page.pageSize);
  const last = items.at(-1)!;
  return { items, next: encodeCursor(at(last), last.id) };
}
