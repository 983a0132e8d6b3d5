// Receiver-side signature checks to copy: HMAC-SHA256 over `<id>.<timestamp>.<raw body>`,
// keyed by the base64-decoded secret, header `v1,<base64>` (several, space-separated,
// while a rotated-out secret still signs). Same scheme as activities/signature.ts.
export const snippets: { lang: string; label: string; code: string }[] = [
  {
    lang: "node",
    label: "Node.js",
    code: `import { createHmac, timingSafeEqual } from "node:crypto";

// headers: the request's headers (lower-case names); rawBody: the bytes received.
export function verify(secret, headers, rawBody, toleranceSeconds = 300) {
  const id = headers["svc-webhook-id"];
  const ts = headers["svc-webhook-timestamp"];
  if (Math.abs(Date.now() / 1000 - Number(ts)) > toleranceSeconds) return false;
  const expected = createHmac("sha256", Buffer.from(secret, "base64"))
    .update(\`\${id}.\${ts}.\`).update(rawBody).digest();
  return headers["svc-webhook-signature"].split(" ").some((s) => {
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
def verify(secret: str, headers: dict, raw_body: bytes, tolerance_seconds: int = 300) -> bool:
    msg_id, ts = headers["svc-webhook-id"], headers["svc-webhook-timestamp"]
    if abs(time.time() - int(ts)) > tolerance_seconds:
        return False
    signed = f"{msg_id}.{ts}.".encode() + raw_body
    expected = hmac.new(base64.b64decode(secret), signed, hashlib.sha256).digest()
    for sig in headers["svc-webhook-signature"].split(" "):
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
	key, err := base64.StdEncoding.DecodeString(secret)
	if err != nil {
		return false
	}
	id, ts := h.Get("svc-webhook-id"), h.Get("svc-webhook-timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || math.Abs(float64(time.Now().Unix()-sec)) > 300 {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(rawBody)
	expected := mac.Sum(nil)
	for _, s := range strings.Split(h.Get("svc-webhook-signature"), " ") {
		sig, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "v1,"))
		if strings.HasPrefix(s, "v1,") && err == nil && hmac.Equal(sig, expected) {
			return true
		}
	}
	return false
}`,
  },
];
