// The deliveries of one endpoint, newest first, filtered by status and event type on the
// server (GET /configs/{id}/deliveries). The first page is polled; "Load more" appends the
// pages after it by cursor until the filters change.
import { useRef, useState } from "preact/hooks";
import { asApiError, type Client, type DeliverySummary, must } from "./api";
import { usePortal } from "./context";
import { useLoad } from "./load";
import { ErrorText } from "./messages";
import { href } from "./router";
import { When } from "./time";

const PAGE = 50;
const STATUSES = ["success", "to retry", "retrying", "waiting", "failed"] as const;

interface Filters {
  status: string;
  eventType: string;
}

interface Page {
  items: DeliverySummary[];
  next: string | undefined;
}

async function fetchPage(client: Client, configId: string, f: Filters, cursor?: string): Promise<Page> {
  const query = {
    pageSize: String(PAGE),
    ...(f.status ? { status: f.status as (typeof STATUSES)[number] } : {}),
    ...(f.eventType ? { eventType: f.eventType } : {}),
    ...(cursor ? { cursor } : {}),
  };
  const { cursor: c } = await must(
    client.GET("/configs/{id}/deliveries", { params: { path: { id: configId }, query } }),
  );
  return { items: c.data, next: c.next };
}

export function Deliveries({ configId, subscribed }: { configId: string; subscribed: string[] }) {
  const { client } = usePortal();
  const [filters, setFilters] = useState<Filters>({ status: "", eventType: "" });
  const [older, setOlder] = useState<Page | undefined>(undefined);
  const [moreError, setMoreError] = useState<ReturnType<typeof asApiError> | undefined>(undefined);
  // The event types to filter by: the subscription's exact ones and every type listed so far.
  const seen = useRef(new Set(subscribed.filter((t) => !t.includes("*"))));
  const first = useLoad(
    () => fetchPage(client, configId, filters),
    [configId, filters.status, filters.eventType],
    3000,
  );
  const filter = (change: Partial<Filters>) => {
    setOlder(undefined);
    setMoreError(undefined);
    setFilters({ ...filters, ...change });
  };
  const next = older ? older.next : first.data?.next;
  const loadMore = async () => {
    if (!next) return;
    try {
      const page = await fetchPage(client, configId, filters, next);
      setOlder({ items: [...(older?.items ?? []), ...page.items], next: page.next });
      setMoreError(undefined);
    } catch (err) {
      setMoreError(asApiError(err));
    }
  };
  // A delivery retried since "Load more" moved up into the first page: shown once, there.
  const firstItems = first.data?.items ?? [];
  const onFirst = new Set(firstItems.map((d) => d.webhookID));
  const shown = [...firstItems, ...(older?.items ?? []).filter((d) => !onFirst.has(d.webhookID))];
  for (const d of shown) if (d.eventType) seen.current.add(d.eventType);
  if (filters.eventType) seen.current.add(filters.eventType);
  const types = [...seen.current].sort();
  return (
    <section aria-labelledby="deliveries-title">
      <div class="title-row">
        <h2 id="deliveries-title">Deliveries</h2>
        <button type="button" onClick={first.reload}>
          Refresh
        </button>
      </div>
      <DeliveryFilters filters={filters} types={types} onChange={filter} />
      <ErrorText error={first.error} />
      {first.data && shown.length === 0 ? <p class="empty">No deliveries.</p> : null}
      {shown.length > 0 ? <DeliveryTable deliveries={shown} /> : null}
      <ErrorText error={moreError} />
      {next ? (
        <button type="button" class="load-more" onClick={loadMore}>
          Load more
        </button>
      ) : null}
    </section>
  );
}

/** The status and event type selects; a change starts the list over. */
function DeliveryFilters({
  filters,
  types,
  onChange,
}: {
  filters: Filters;
  types: string[];
  onChange: (change: Partial<Filters>) => void;
}) {
  return (
    <div class="filters">
      <label for="filter-status">Status</label>
      <select
        id="filter-status"
        value={filters.status}
        onChange={(e) => onChange({ status: e.currentTarget.value })}
      >
        <option value="">All</option>
        {STATUSES.map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
      <label for="filter-type">Event type</label>
      <select
        id="filter-type"
        value={filters.eventType}
        onChange={(e) => onChange({ eventType: e.currentTarget.value })}
      >
        <option value="">All</option>
        {types.map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </select>
    </div>
  );
}

function DeliveryTable({ deliveries }: { deliveries: DeliverySummary[] }) {
  return (
    <table class="list stack deliveries">
      <thead>
        <tr>
          <th scope="col">Last attempt</th>
          <th scope="col">Event type</th>
          <th scope="col">Status</th>
          <th scope="col">Attempts</th>
          <th scope="col">Last HTTP status</th>
          <th scope="col">Next retry</th>
        </tr>
      </thead>
      <tbody>
        {deliveries.map((d) => (
          <tr key={d.webhookID} data-webhook={d.webhookID}>
            <td class="lead">
              <a href={href.delivery(d.webhookID)}>
                <When iso={d.lastAttemptAt ?? d.acceptedAt} />
              </a>
              {d.replayOf ? <div class="muted small">replay</div> : null}
            </td>
            <td class="event-type" data-label="Event type">
              {d.eventType ?? "—"}
            </td>
            <td class="status" data-label="Status">
              {d.status}
            </td>
            <td class="attempt-count" data-label="Attempts">
              {d.attemptCount}
            </td>
            <td class="status-code" data-label="Last HTTP status">
              {d.lastStatusCode || "—"}
            </td>
            <td class="next-retry" data-label="Next retry">
              {d.nextRetryAfter ? <When iso={d.nextRetryAfter} /> : "—"}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
