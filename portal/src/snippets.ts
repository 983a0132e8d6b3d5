// Receiver-side signature checks to copy: HMAC-SHA256 over `<id>.<timestamp>.<raw body>`,
// keyed by the base64-decoded secret, header `v1,<base64>` (several, space-separated,
// while a rotated-out secret still signs). Same scheme as activities/signature.ts.
// Either header style (a config's `signatureHeaders`): Standard Webhooks' webhook-* names or
// the product's svc-webhook-*, so a receiver's check keeps working when the style changes.
// test/webhooks/verify-snippets.test.ts runs each against clients/test-vectors.json.
export const snippets: { lang: string; label: string; code: string }[] = [
  {
    lang: "node",
    label: "Node.js",
    code: `import { createHmac, timingSafeEqual } from "node:crypto";

// headers: the request's headers (lower-case names); rawBody: the bytes received.
export function verify(secret, headers, rawBody, toleranceSeconds = 300, now = Date.now() / 1000) {
  const header = (name) => headers[\`webhook-\${name}\`] ?? headers[\`svc-webhook-\${name}\`];
  const id = header("id");
  const ts = header("timestamp");
  const signatures = header("signature");
  if (!id || !/^\\d+$/.test(ts ?? "") || !signatures || Math.abs(now - Number(ts)) > toleranceSeconds) return false;
  const expected = createHmac("sha256", Buffer.from(secret.replace(/^whsec_/, ""), "base64"))
    .update(\`\${id}.\${ts}.\`).update(rawBody).digest();
  return signatures.split(" ").some((s) => {
    const sig = Buffer.from(s.slice(3), "base64");
    return s.startsWith("v1,") && sig.length === expected.length && timingSafeEqual(sig, expected);
  });
}`,
  },
  {
    lang: "python",
    label: "Python",
    code: `import base64, hashlib, hmac, time

# headers: the request's headers (lower-case names); raw_body: the bytes received.
def verify(secret: str, headers: dict, raw_body: bytes, tolerance_seconds: int = 300, now: float | None = None) -> bool:
    def header(name: str) -> str:
        return headers.get(f"webhook-{name}") or headers.get(f"svc-webhook-{name}") or ""
    msg_id, ts, signatures = header("id"), header("timestamp"), header("signature")
    now = time.time() if now is None else now
    if not (msg_id and ts.isdigit() and signatures) or abs(now - int(ts)) > tolerance_seconds:
        return False
    signed = f"{msg_id}.{ts}.".encode() + raw_body
    expected = hmac.new(base64.b64decode(secret.removeprefix("whsec_")), signed, hashlib.sha256).digest()
    for sig in signatures.split(" "):
        if sig.startswith("v1,") and hmac.compare_digest(base64.b64decode(sig[3:]), expected):
            return True
    return False`,
  },
  {
    lang: "go",
    label: "Go",
    code: `import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Verify checks the signature of a delivery; rawBody is the bytes received.
func Verify(secret string, h http.Header, rawBody []byte) bool {
	return VerifyAt(secret, h, rawBody, time.Now())
}

// VerifyAt is Verify with the clock given.
func VerifyAt(secret string, h http.Header, rawBody []byte, now time.Time) bool {
	header := func(name string) string {
		if v := h.Get("webhook-" + name); v != "" {
			return v
		}
		return h.Get("svc-webhook-" + name)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	id, ts := header("id"), header("timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || err != nil || math.Abs(float64(now.Unix()-sec)) > 300 {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(rawBody)
	expected := mac.Sum(nil)
	for _, s := range strings.Split(header("signature"), " ") {
		sig, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "v1,"))
		if strings.HasPrefix(s, "v1,") && err == nil && hmac.Equal(sig, expected) {
			return true
		}
	}
	return false
}`,
  },
];
