"""The local Institution Data Service (contract section 8). Shares no code with the client.

Modules: server (entry points: SandboxOptions, FaultOptions, serve_in_thread, serve_in_subprocess),
app (routes, bearer checks, faults, counters), token_endpoint, service (operations and cross-record
rules), entities (fields and body validation), store (SQLite), seed, tokens (access and page
tokens), faults, http (bodies and envelopes), docs + openapi + openapi_schemas (/q/openapi.json,
/q/swagger-ui/).

Decisions for what the spec and contract leave open:
- Status codes: GET 200, POST (create) 201, PATCH 200. Create and update answer the record as a
  get-one does (curriculum `children`, application `comments`/`credit_matches`).
- Paging: 100 a page in creation order, keyset on the row's position. `total` counts the records
  matching the first request's filters (the whole collection without filters). The page after the
  last record is empty and carries `page_token: null`; the page holding the last record still
  carries a token. Page tokens are signed (HMAC, key drawn at start): forged, altered, of another
  collection or institution, or from an earlier server run -> 400 `ValidationError: invalid page
  token` / `... does not belong to this collection`; older than page_token_ttl seconds -> 400
  `ValidationError: page token expired`. Query parameters sent beside a page token are ignored.
- Filters: equality on top-level text fields (string, enum and date fields, `id`, and the entity's
  reference: curriculum `parent` (its id), credential/application `applicant_id`, suggestion
  `application_id`); another parameter -> 400 `ValidationError: unknown filter 'x'`; the same
  one twice -> 400.
- GET one accepts the id or the entity's key (curriculum `code`, applicant `external_id`,
  arrangement `code`, tag/role `name`, user `email_address`); PATCH only the id. Another
  institution's record is 404, exactly as a missing one.
- Faults: see faults.py (lost answers are 500 after the commit; errors 500 or 503 before it).
- Outbox: GET /q/sandbox/outbox lists the messages of `send_email` of the caller's institution
  (a bearer token is required, as on /institution routes; 401 without one).
- Bodies over 1 MiB, invalid JSON, NaN/Infinity, lone surrogates, non-objects -> 400.
"""
