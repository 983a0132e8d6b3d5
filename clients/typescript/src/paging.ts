import { type CallResult, unwrap } from "./errors.js";

// List endpoints answer {"cursor": {"data": [...], "hasMore", "next"}}; the next page is
// asked for with ?cursor=<next> (and the same pageSize). Pages are keyset pages, so items
// created while iterating never shift others between pages.

export interface CursorPage<T> {
  cursor: { data: T[]; hasMore: boolean; next?: string; pageSize?: number };
}

/**
 * Every item of a list endpoint, page after page: `page` performs the call for one cursor
 * (undefined for the first page). A failed page throws ApiError.
 *
 *   for await (const d of paginate((cursor) =>
 *     api.GET("/configs/{id}/deliveries", { params: { path: { id }, query: { pageSize: "100", cursor } } }))) …
 */
export async function* paginate<T>(
  page: (cursor: string | undefined) => Promise<CallResult<CursorPage<T>>>,
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const { cursor: current } = unwrap(await page(cursor));
    yield* current.data;
    if (current.hasMore && !current.next) throw new Error("the API said hasMore without a next cursor");
    cursor = current.hasMore ? current.next : undefined;
  } while (cursor !== undefined);
}
