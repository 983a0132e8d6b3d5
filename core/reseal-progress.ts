// What a re-sealing run is asked to do and reports, shared by the config secrets'
// (secret-resealing.ts) and the endpoint credentials' (auth-resealing.ts) runs.

export interface ResealOptions {
  /** Only rows holding a plain value (the startup step); otherwise every row not under the newest key. */
  plainOnly: boolean;
  batchSize: number;
  /** Wait between batches (ms), to spare a busy database. */
  pauseMs?: number;
  onBatch?: (progress: ResealProgress) => void;
}

export interface ResealProgress {
  /** Rows to move when the run started. */
  total: number;
  moved: number;
  /** Rows a concurrent write changed between the read and the rewrite (left as that write sealed them). */
  changedMeanwhile: number;
}
