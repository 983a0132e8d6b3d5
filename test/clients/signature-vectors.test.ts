import { expect } from "chai";
import { signatureHeader, verifySignature } from "../../activities/signature.js";
import { signatureVectors, type SignatureVector as Vector } from "../support/signature-vectors.js";

// The product's side of clients/test-vectors.json, the file every client's verifier is
// tested against too: our signer makes exactly the signatures of the vectors, and our own
// verifier agrees with each vector's outcome.

const vectors = signatureVectors();
/** A header of either naming: svc-webhook-* or the Standard Webhooks webhook-*. */
const header = (v: Vector, name: string) => v.headers[`webhook-${name}`] ?? v.headers[`svc-webhook-${name}`];

describe("the shared signature test vectors and the product's signer", () => {
  it("has every outcome the clients must tell apart", () => {
    const outcomes = new Set(vectors.cases.map((v) => v.expect));
    expect([...outcomes].sort()).to.deep.equal(
      [
        "ok",
        "no-matching-signature",
        "timestamp-out-of-tolerance",
        "missing-header",
        "invalid-timestamp",
      ].sort(),
    );
    const rotated = vectors.cases.filter(
      (v) => v.signed && v.signed.secrets.length === 2 && v.expect === "ok",
    );
    expect(new Set(rotated.map((v) => v.secret.replace(/^whsec_/, "")))).to.have.property("size", 2);
  });

  for (const v of vectors.cases.filter((c) => c.signed)) {
    it(`signs as the vector says: ${v.name}`, () => {
      const { secrets, body, timestamp } = v.signed!;
      expect(header(v, "timestamp")).to.equal(String(timestamp));
      expect(signatureHeader(secrets, header(v, "id")!, timestamp, body)).to.equal(header(v, "signature"));
    });
  }

  for (const v of vectors.cases.filter((c) => c.expect !== "missing-header")) {
    it(`verifies as the vector says: ${v.name}`, () => {
      const ok = verifySignature(
        v.secret.replace(/^whsec_/, ""),
        { id: header(v, "id")!, timestamp: header(v, "timestamp")!, signature: header(v, "signature")! },
        v.body,
        { now: v.now * 1000, toleranceSeconds: vectors.toleranceSeconds },
      );
      expect(ok).to.equal(v.expect === "ok");
    });
  }
});
