// One delivery: its attempts (time, HTTP status, duration, error, next retry, and the
// excerpt of the endpoint's answer the API keeps), the payload as sent, the headers of its
// last POST as sent (credentials masked by the API), and replay.
import { useEffect, useState } from "preact/hooks";
import { type ApiError, type Attempt, asApiError, type Delivery, must } from "./api";
import { usePortal } from "./context";
import { actionKey, pretty } from "./format";
import { useLoad } from "./load";
import { ErrorText, LoadFailure } from "./messages";
import { href } from "./router";
import { When } from "./time";

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
              <dd>
                <When iso={data.nextRetryAfter} />
              </dd>
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
        {can("replay") ? <Replay id={id} configId={data.configID} /> : null}
      </section>
      <Attempts delivery={data} />
      {first ? (
        <section aria-labelledby="payload-title">
          <h2 id="payload-title">Payload as sent</h2>
          <pre class="payload">{pretty(first.payload)}</pre>
          <details>
            <summary>Exact body (what the signature covers)</summary>
            <pre class="payload-raw">{first.payload}</pre>
          </details>
        </section>
      ) : null}
      <SentHeaders attempt={data.attempts.at(-1)} />
    </>
  );
}

function Attempts({ delivery }: { delivery: Delivery }) {
  return (
    <section aria-labelledby="attempts-title">
      <h2 id="attempts-title">Attempts</h2>
      {delivery.attempts.length === 0 ? <p class="empty">Not sent yet.</p> : null}
      <ol class="attempts">
        {delivery.attempts.map((a) => (
          <AttemptItem key={a.id} attempt={a} />
        ))}
      </ol>
    </section>
  );
}

function AttemptItem({ attempt: a }: { attempt: Attempt }) {
  const answer = a.response;
  return (
    <li class="attempt" data-attempt={a.retryAttempt + 1}>
      <p class="attempt-line">
        <strong>#{a.retryAttempt + 1}</strong> <When iso={a.createdAt} /> · HTTP{" "}
        <span class="status-code">{a.statusCode || "no answer"}</span>
        {a.durationMs === undefined ? "" : ` · ${a.durationMs} ms`} ·{" "}
        <span class="attempt-status">{a.status}</span>
      </p>
      {a.error ? <p class="attempt-error warn">{a.error}</p> : null}
      {a.nextRetryAfter ? (
        <p class="muted small">
          Next retry <When iso={a.nextRetryAfter} />
        </p>
      ) : null}
      {answer ? (
        <details class="response" open={a.statusCode < 200 || a.statusCode > 299}>
          <summary>Response{answer.truncated ? " (first 1 KiB)" : ""}</summary>
          <HeaderTable headers={answer.headers} />
          {answer.body ? (
            <pre class="response-body">{answer.body}</pre>
          ) : (
            <p class="muted small">Empty body.</p>
          )}
        </details>
      ) : null}
    </li>
  );
}

/** The headers of the last POST as the API recorded them (older attempts have none). */
function SentHeaders({ attempt }: { attempt: Attempt | undefined }) {
  if (!attempt) return null;
  return (
    <section aria-labelledby="headers-title">
      <h2 id="headers-title">Headers of the last attempt, as sent</h2>
      {attempt.requestHeaders ? (
        <HeaderTable headers={attempt.requestHeaders} />
      ) : (
        <p class="muted">Not recorded for this attempt.</p>
      )}
    </section>
  );
}

function HeaderTable({ headers }: { headers: Record<string, string> }) {
  const names = Object.keys(headers);
  if (names.length === 0) return null;
  return (
    <table class="list headers">
      <tbody>
        {names.map((name) => (
          <tr key={name}>
            <th scope="row">
              <code>{name}</code>
            </th>
            <td>
              <code>{headers[name]}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Replay, and a link to the new delivery once the API can show it: a delivery is readable
 * from its first attempt (or its wait) on, so until the endpoint's list holds it the notice
 * says it is on its way (a link at once led to "not found" for the first moment).
 */
function Replay({ id, configId }: { id: string; configId: string }) {
  const { client } = usePortal();
  const [replayed, setReplayed] = useState<{ id: string; readable: boolean } | null>(null);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const replay = async () => {
    setError(undefined);
    try {
      const { data } = await must(
        client.POST("/webhooks/{webhookId}/replay", {
          params: { path: { webhookId: id }, header: { "Idempotency-Key": actionKey("replay") } },
        }),
      );
      setReplayed({ id: data.webhookID, readable: false });
    } catch (err) {
      setError(asApiError(err));
    }
  };
  const waiting = replayed && !replayed.readable ? replayed.id : undefined;
  useEffect(() => {
    if (!waiting) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let live = true;
    const look = async () => {
      const query = { pageSize: "20" };
      const { cursor } = await must(
        client.GET("/configs/{id}/deliveries", { params: { path: { id: configId }, query } }),
      );
      if (!live) return;
      if (cursor.data.some((d) => d.webhookID === waiting)) setReplayed({ id: waiting, readable: true });
      else timer = setTimeout(look, 500);
    };
    look().catch((err) => live && setError(asApiError(err)));
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [waiting, configId, client]);
  return (
    <div class="actions">
      <button type="button" onClick={replay}>
        Replay
      </button>
      {replayed ? (
        <p role="status">
          {replayed.readable ? (
            <>
              Replay started: <a href={href.delivery(replayed.id)}>open the new delivery</a>
            </>
          ) : (
            "Replay started: its first attempt is on its way…"
          )}
        </p>
      ) : null}
      <ErrorText error={error} />
    </div>
  );
}
