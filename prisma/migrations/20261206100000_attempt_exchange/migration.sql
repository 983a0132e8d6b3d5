-- What each attempt kept of its POST and of the endpoint's answer
-- (activities/attempt-exchange.ts): the request's headers as sent, credentials masked, and
-- an excerpt of the answer (a few headers, the body's first KiB). Bounded by the writer;
-- it lives in the row, so retention removes it with the attempt. NULL for the rows written
-- before, and when nothing was sent.
ALTER TABLE "attempts" ADD COLUMN "exchange" JSONB;
