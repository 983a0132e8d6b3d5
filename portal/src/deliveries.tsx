// The deliveries of one endpoint, newest first, filtered by status and event type. The API
// lists attempts (GET /configs/{id}/attempts, newest first); a delivery is its attempts
// grouped by webhook id, its status the newest attempt's, its event type the body's `type`.
import { useState } from "preact/hooks";
import { type Attempt, must } from "./api";
import { usePortal } from "./context";
import { when } from "./format";
import { useLoad } from "./load";
import { ErrorText } from "./messages";
import { href } from "./router";

const PAGE = 500;
const STATUSES = ["success", "to retry", "retrying", "failed"] as const;

interface DeliveryRow {
  webhookID: string;
  eventType: string;
  status: string;
  attempts: number;
  lastStatusCode: number;
  lastAt: string;
  replayOf: string | undefined;
}

export function groupDeliveries(attempts: Attempt[]): DeliveryRow[] {
  const rows = new Map<string, DeliveryRow>();
  for (const a of attempts) {
    const row = rows.get(a.webhookID);
    if (row) {
      row.attempts++;
      continue;
    }
    rows.set(a.webhookID, {
      webhookID: a.webhookID,
      eventType: typeOf(a.payload),
      status: a.status,
      attempts: 1,
      lastStatusCode: a.statusCode,
      lastAt: a.createdAt,
      replayOf: a.replayOf,
    });
  }
  return [...rows.values()];
}

function typeOf(payload: string): string {
  try {
    const type = (JSON.parse(payload) as { type?: unknown }).type;
    return typeof type === "string" ? type : "—";
  } catch {
    return "—";
  }
}

export function Deliveries({ configId }: { configId: string }) {
  const { client } = usePortal();
  const [status, setStatus] = useState("");
  const [eventType, setEventType] = useState("");
  const { data, error, reload } = useLoad(
    async () =>
      groupDeliveries(
        (
          await must(
            client.GET("/configs/{id}/attempts", {
              params: { path: { id: configId }, query: { pageSize: String(PAGE) } },
            }),
          )
        ).cursor.data,
      ),
    [configId],
    3000,
  );
  const types = [...new Set((data ?? []).map((d) => d.eventType))].sort();
  const shown = (data ?? []).filter(
    (d) => (!status || d.status === status) && (!eventType || d.eventType === eventType),
  );
  return (
    <section aria-labelledby="deliveries-title">
      <div class="title-row">
        <h2 id="deliveries-title">Deliveries</h2>
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </div>
      <div class="filters">
        <label for="filter-status">Status</label>
        <select id="filter-status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
          <option value="">All</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
        <label for="filter-type">Event type</label>
        <select id="filter-type" value={eventType} onChange={(e) => setEventType(e.currentTarget.value)}>
          <option value="">All</option>
          {types.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </div>
      <ErrorText error={error} />
      {data && shown.length === 0 ? <p class="empty">No deliveries.</p> : null}
      {shown.length > 0 ? (
        <table class="list deliveries">
          <thead>
            <tr>
              <th scope="col">Last attempt</th>
              <th scope="col">Event type</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last HTTP status</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((d) => (
              <tr key={d.webhookID} data-webhook={d.webhookID}>
                <td>
                  <a href={href.delivery(d.webhookID)}>{when(d.lastAt)}</a>
                  {d.replayOf ? <div class="muted small">replay</div> : null}
                </td>
                <td>{d.eventType}</td>
                <td class="status">{d.status}</td>
                <td class="attempt-count">{d.attempts}</td>
                <td class="status-code">{d.lastStatusCode || "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {data && data.length >= PAGE ? <p class="muted small">Showing the newest {PAGE} attempts.</p> : null}
    </section>
  );
}
