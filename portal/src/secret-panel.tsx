// The signing secret: the current one shown on request (GET /configs/{id}/secret, which a
// session reaches only with the "secrets" feature, as this panel), to verify the first
// deliveries with; rotating it, the new one shown once with how long the old one keeps
// signing; verification snippets to copy.
import { useState } from "preact/hooks";
import { type ApiError, asApiError, must } from "./api";
import { usePortal } from "./context";
import { when } from "./format";
import { ErrorText } from "./messages";
import { snippets } from "./snippets";

const OVERLAPS = [
  ["", "Stop signing with the old secret now"],
  ["1h", "Keep signing with the old secret for 1 hour"],
  ["24h", "Keep signing with the old secret for 24 hours"],
  ["168h", "Keep signing with the old secret for 7 days"],
] as const;

export function SecretPanel({ configId }: { configId: string }) {
  const { client } = usePortal();
  const [overlap, setOverlap] = useState("24h");
  const [rotated, setRotated] = useState<{ secret: string; oldUntil: string | undefined } | null>(null);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const rotate = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const { data } = await must(
        client.PUT("/configs/{id}/secret/change", {
          params: { path: { id: configId } },
          body: overlap ? { overlap } : {},
        }),
      );
      setRotated({ secret: data.secret, oldUntil: data.previousSecretExpiresAt });
    } catch (err) {
      setError(asApiError(err));
    }
  };
  return (
    <section aria-labelledby="secret-title">
      <h2 id="secret-title">Signing secret</h2>
      <CurrentSecret configId={configId} key={rotated?.secret ?? ""} />
      <form class="inline-form" onSubmit={rotate}>
        <label for="rotate-overlap">Old secret</label>
        <select id="rotate-overlap" value={overlap} onChange={(e) => setOverlap(e.currentTarget.value)}>
          {OVERLAPS.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
        <button type="submit">Rotate secret</button>
      </form>
      <ErrorText error={error} />
      {rotated ? (
        <div class="new-secret" role="status">
          <label for="new-secret">New secret (shown once: store it now)</label>
          <input id="new-secret" type="text" readOnly value={rotated.secret} />
          <CopyButton text={rotated.secret} label="Copy secret" />
          <p>
            {rotated.oldUntil
              ? `The old secret keeps signing until ${when(rotated.oldUntil)}: deliveries carry both signatures until then.`
              : "The old secret no longer signs deliveries."}
          </p>
        </div>
      ) : null}
      <h3>Verify signatures</h3>
      {snippets.map((s) => (
        <details key={s.lang}>
          <summary>{s.label}</summary>
          <pre class="snippet" data-lang={s.lang}>
            {s.code}
          </pre>
          <CopyButton text={s.code} label={`Copy ${s.label} snippet`} />
        </details>
      ))}
    </section>
  );
}

/** The secret deliveries are signed with now, fetched only when asked for and hidden again on request. */
function CurrentSecret({ configId }: { configId: string }) {
  const { client } = usePortal();
  const [shown, setShown] = useState<{ secret: string; previousUntil: string | undefined } | null>(null);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const reveal = async () => {
    setError(undefined);
    try {
      const { data } = await must(client.GET("/configs/{id}/secret", { params: { path: { id: configId } } }));
      setShown({ secret: data.secret, previousUntil: data.previousSecretExpiresAt });
    } catch (err) {
      setError(asApiError(err));
    }
  };
  return (
    <div class="current-secret">
      {shown ? (
        <>
          <label for="current-secret">Current secret</label>
          <input id="current-secret" type="text" readOnly value={shown.secret} />
          <div class="actions">
            <CopyButton text={shown.secret} label="Copy current secret" />
            <button type="button" onClick={() => setShown(null)}>
              Hide secret
            </button>
          </div>
          {shown.previousUntil ? (
            <p class="muted small">The previous secret also signs until {when(shown.previousUntil)}.</p>
          ) : null}
        </>
      ) : (
        <button type="button" onClick={reveal}>
          Show current secret
        </button>
      )}
      <ErrorText error={error} />
    </div>
  );
}

function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState("");
  // navigator.clipboard exists only in secure contexts (https, localhost).
  const copy = () =>
    (navigator.clipboard?.writeText(text) ?? Promise.reject(new Error("no clipboard"))).then(
      () => setDone("Copied"),
      () => setDone("Copy failed: select the text and copy it"),
    );
  return (
    <>
      <button type="button" onClick={copy}>
        {label}
      </button>
      <span class="muted small" role="status">
        {done}
      </span>
    </>
  );
}
