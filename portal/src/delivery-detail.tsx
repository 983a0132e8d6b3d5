// One delivery: its attempts (time, HTTP status, duration, error, next retry), the
// payload as sent, the headers it is sent with (credentials masked), and replay.
import { useState } from "preact/hooks";
import { type ApiError, asApiError, type Delivery, must } from "./api";
import { usePortal } from "./context";
import { actionKey, pretty, when } from "./format";
import { useLoad } from "./load";
import { ErrorText, LoadFailure } from "./messages";
import { href } from "./router";

const MASK = "********";

export function DeliveryDetail({ id }: { id: string }) {
  const { client, can } = usePortal();
  const { data, error } = useLoad(
    async () =>
      (await must(client.GET("/webhooks/{webhookId}", { params: { path: { webhookId: id } } }))).data,
    [id],
    3000,
  );
  if (error) return <LoadFailure error={error} what="This delivery" />;
  if (!data) return <p>Loading…</p>;
  const first = data.attempts[0];
  return (
    <>
      <p>
        <a href={href.endpoint(data.configID)}>← Endpoint</a>
      </p>
      <section aria-labelledby="delivery-title">
        <h1 id="delivery-title">Delivery</h1>
        <dl class="facts">
          <dt>Id</dt>
          <dd>
            <code>{data.webhookID}</code>
          </dd>
          <dt>Status</dt>
          <dd class="delivery-status">{data.status}</dd>
          {data.reason ? (
            <>
              <dt>Reason</dt>
              <dd>{data.reason}</dd>
            </>
          ) : null}
          {data.nextRetryAfter ? (
            <>
              <dt>Next retry</dt>
              <dd>{when(data.nextRetryAfter)}</dd>
            </>
          ) : null}
          {first?.replayOf ? (
            <>
              <dt>Replay of</dt>
              <dd>
                <a href={href.delivery(first.replayOf)}>{first.replayOf}</a>
              </dd>
            </>
          ) : null}
        </dl>
        {can("replay") ? <Replay id={id} /> : null}
      </section>
      <Attempts delivery={data} />
      {first ? (
        <section aria-labelledby="payload-title">
          <h2 id="payload-title">Payload as sent</h2>
          <pre class="payload">{pretty(first.payload)}</pre>
        </section>
      ) : null}
      <Headers delivery={data} />
    </>
  );
}

function Attempts({ delivery }: { delivery: Delivery }) {
  return (
    <section aria-labelledby="attempts-title">
      <h2 id="attempts-title">Attempts</h2>
      {delivery.attempts.length === 0 ? <p class="empty">Not sent yet.</p> : null}
      <table class="list attempts">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Time</th>
            <th scope="col">HTTP status</th>
            <th scope="col">Duration</th>
            <th scope="col">Status</th>
            <th scope="col">Error</th>
            <th scope="col">Next retry</th>
          </tr>
        </thead>
        <tbody>
          {delivery.attempts.map((a) => (
            <tr key={a.id}>
              <td>{a.retryAttempt + 1}</td>
              <td>{when(a.createdAt)}</td>
              <td class="status-code">{a.statusCode || "no answer"}</td>
              <td>{a.durationMs === undefined ? "—" : `${a.durationMs} ms`}</td>
              <td>{a.status}</td>
              <td>{a.error ?? ""}</td>
              <td>{a.nextRetryAfter ? when(a.nextRetryAfter) : ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** The headers of the send: the fixed ones, then the endpoint's custom headers, values masked. */
function Headers({ delivery }: { delivery: Delivery }) {
  const { client } = usePortal();
  const auth = useLoad(
    async () =>
      (await must(client.GET("/configs/{id}/auth", { params: { path: { id: delivery.configID } } }))).data,
    [delivery.configID],
  );
  const key = idempotencyKeyOf(delivery.attempts[0]?.payload);
  const rows: [string, string][] = [
    ["content-type", "application/json"],
    ["svc-webhook-id", delivery.webhookID],
    ["svc-webhook-timestamp", "the send's Unix time"],
    ["svc-webhook-signature", `v1,${MASK}`],
    ...(key ? ([["svc-webhook-idempotency-key", key]] as [string, string][]) : []),
  ];
  for (const h of auth.data?.headers ?? []) rows.push([h.name ?? "", MASK]);
  if (auth.data?.basic || auth.data?.bearer || auth.data?.oauth2) rows.push(["authorization", MASK]);
  return (
    <section aria-labelledby="headers-title">
      <h2 id="headers-title">Headers</h2>
      <table class="list headers">
        <tbody>
          {rows.map(([name, value]) => (
            <tr key={name}>
              <th scope="row">
                <code>{name}</code>
              </th>
              <td>
                <code>{value}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function Replay({ id }: { id: string }) {
  const { client } = usePortal();
  const [replayed, setReplayed] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const replay = async () => {
    setError(undefined);
    try {
      const { data } = await must(
        client.POST("/webhooks/{webhookId}/replay", {
          params: { path: { webhookId: id }, header: { "Idempotency-Key": actionKey("replay") } },
        }),
      );
      setReplayed(data.webhookID);
    } catch (err) {
      setError(asApiError(err));
    }
  };
  return (
    <div class="actions">
      <button type="button" onClick={replay}>
        Replay
      </button>
      {replayed ? (
        <p role="status">
          Replay started: <a href={href.delivery(replayed)}>open the new delivery</a>
        </p>
      ) : null}
      <ErrorText error={error} />
    </div>
  );
}

/** The event's idempotency key, sent as a header too (RFC 8187-encoded when not plain ASCII). */
function idempotencyKeyOf(payload: string | undefined): string | undefined {
  try {
    const key = (JSON.parse(payload ?? "") as { idempotency_key?: unknown }).idempotency_key;
    return typeof key === "string" && key !== "" ? key : undefined;
  } catch {
    return undefined;
  }
}
