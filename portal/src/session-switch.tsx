// Asked when a link brings another session's token into a tab that holds one
// (session.ts): which tenant each session is for, and a choice; nothing changes until the
// user picks. The offered session is read with a plain request, so a link whose token is
// no good only says so here and never ends the current session's view.
import { useEffect, useState } from "preact/hooks";
import type { PortalSession } from "./api";
import { switchSession } from "./session";

const name = (s: PortalSession) => s.tenant.name || s.tenant.uid;

export function SessionSwitch({
  current,
  offered,
  onKeep,
}: {
  current: PortalSession;
  offered: string;
  onKeep: () => void;
}) {
  const [other, setOther] = useState<PortalSession | null>(null);
  const [invalid, setInvalid] = useState(false);
  useEffect(() => {
    fetch(`${window.location.origin}/portal-sessions/current`, {
      headers: { authorization: `Bearer ${offered}` },
    })
      .then(async (r) => (r.ok ? setOther((await r.json()) as PortalSession) : setInvalid(true)))
      .catch(() => setInvalid(true));
  }, [offered]);
  return (
    <main class="notice switch" aria-labelledby="switch-title">
      <h1 id="switch-title">Open another session?</h1>
      <p>
        This tab is signed in to the webhooks of <strong>{name(current)}</strong>. The link you followed opens{" "}
        {other ? (
          <>
            the webhooks of <strong>{name(other)}</strong>
          </>
        ) : invalid ? (
          "a session that is not valid (expired, revoked or altered)"
        ) : (
          "another session"
        )}
        . Switch only if you expected this link.
      </p>
      <p class="actions">
        <button type="button" class="primary" onClick={onKeep}>
          Stay in {name(current)}
        </button>
        {other ? (
          <button type="button" onClick={() => switchSession(offered)}>
            Switch to {name(other)}
          </button>
        ) : null}
      </p>
    </main>
  );
}
