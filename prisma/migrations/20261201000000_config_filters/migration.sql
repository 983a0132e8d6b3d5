-- Payload filters: a config may carry a filter (MongoDB-style operators, checked by the
-- API) that an event must pass besides its type. NULL, the default, passes every event.
ALTER TABLE "configs" ADD COLUMN "filter" JSONB;
