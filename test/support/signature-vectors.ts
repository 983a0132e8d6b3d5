import { readFileSync } from "node:fs";
import { fromRoot } from "../../common/paths.js";

// clients/test-vectors.json: the signature cases every verifier is tested against (the
// product's signer and verifier, each client library's, the portal's snippets).

export const SIGNATURE_VECTORS = fromRoot("clients/test-vectors.json");

export interface SignatureVector {
  name: string;
  secret: string;
  headers: Record<string, string>;
  body: string;
  now: number;
  /** `ok`, or the verifier's failure code. */
  expect: string;
  signed?: { secrets: string[]; body: string; timestamp: number };
}

export const signatureVectors = (): { toleranceSeconds: number; cases: SignatureVector[] } =>
  JSON.parse(readFileSync(SIGNATURE_VECTORS, "utf8"));
