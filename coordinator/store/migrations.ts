/**
 * Schema migrations, applied in order; entry i takes the schema from version i to i+1.
 * JSON columns hold spec objects exactly as the API shows them (snake_case).
 * Timestamps are ISO 8601 UTC strings.
 *
 * The same texts run on PostgreSQL, rewritten by postgres/postgres-ddl.ts (INTEGER -> BIGINT,
 * REAL -> DOUBLE PRECISION, TEXT -> TEXT COLLATE "C"). So a new entry keeps to SQLite DDL that the
 * rewrite handles: plain types, no AUTOINCREMENT, no WITHOUT ROWID, and no ALTER TABLE beyond ADD
 * COLUMN or RENAME. Where the two engines must differ, an entry gives both texts.
 */
export type Migration = string | { sqlite: string; postgres: string };

export const MIGRATIONS: readonly Migration[] = [
  `
  CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    leaderboard_opt_in INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL
  );

  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    secret_sha256 TEXT NOT NULL UNIQUE,
    -- First characters of the secret after the prefix, so a human can tell keys apart.
    hint TEXT NOT NULL,
    scope TEXT NOT NULL,            -- JSON array of scope strings
    created TEXT NOT NULL,
    revoked TEXT
  );

  CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    created TEXT NOT NULL,
    completed TEXT,
    request TEXT NOT NULL,          -- JSON: the submitted fields, as submitted
    resolved_pins TEXT NOT NULL,    -- JSON
    plan TEXT NOT NULL,             -- JSON: what the scheduler needs (cells filter, seeds, control rate)
    result TEXT,                    -- JSON Result once completed (or partial, once stopped)
    status_code TEXT,               -- error code behind failed or stopped
    status_message TEXT,
    idempotency_key TEXT,
    priority TEXT NOT NULL,
    episodes_total INTEGER NOT NULL,
    UNIQUE (account_id, idempotency_key)
  );
  CREATE INDEX runs_account_created ON runs(account_id, created DESC, id DESC);
  CREATE INDEX runs_status ON runs(status);

  CREATE TABLE run_status_history (
    run_id TEXT NOT NULL REFERENCES runs(id),
    status TEXT NOT NULL,
    at TEXT NOT NULL,
    cell TEXT,
    reason TEXT
  );
  CREATE INDEX run_status_history_run ON run_status_history(run_id);

  CREATE TABLE episodes (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(id),
    idx INTEGER NOT NULL,
    -- pending: waiting for a cell; assigned: sent to a cell; running: the cell started it;
    -- done: outcome recorded; cancelled: the run stopped before it ran.
    status TEXT NOT NULL,
    attempt INTEGER NOT NULL DEFAULT 0,
    seed INTEGER NOT NULL,
    cell_id TEXT,
    outcome TEXT,
    failure_cluster TEXT,
    duration_s REAL,
    reset_s REAL,
    replay_spec TEXT,               -- JSON
    meta TEXT,                      -- JSON
    evaluation TEXT,                -- JSON
    -- JSON array of {attempt, cell, reason, detail, at}: every attempt that did not finish.
    interruptions TEXT NOT NULL DEFAULT '[]',
    assigned_at TEXT,
    started_at TEXT,
    finished_at TEXT,
    UNIQUE (run_id, idx)
  );
  CREATE INDEX episodes_status ON episodes(status);

  CREATE TABLE artifacts (
    episode_id TEXT NOT NULL REFERENCES episodes(id),
    run_id TEXT NOT NULL REFERENCES runs(id),
    kind TEXT NOT NULL,             -- mcap, video
    file_name TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    -- pending: announced by the agent, not yet uploaded; stored: verified and served; purged.
    status TEXT NOT NULL,
    stored_at TEXT,
    PRIMARY KEY (episode_id, kind)
  );
  CREATE INDEX artifacts_run ON artifacts(run_id);

  CREATE TABLE cells (
    id TEXT PRIMARY KEY,
    token_sha256 TEXT NOT NULL,
    model TEXT NOT NULL,
    enrolled TEXT NOT NULL,
    revoked TEXT,
    last_seq_applied INTEGER NOT NULL DEFAULT 0,
    last_seen TEXT,
    hello TEXT                      -- JSON of the last Hello
  );

  CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    account_id TEXT REFERENCES accounts(id),
    name TEXT NOT NULL,
    version INTEGER,                -- N of <name>@v<N> once frozen
    status TEXT NOT NULL,
    visibility TEXT NOT NULL,
    created TEXT NOT NULL,
    frozen TEXT,
    spec TEXT NOT NULL,             -- JSON: the Task Spec's creation fields
    signatures TEXT NOT NULL DEFAULT '[]',
    pilot TEXT,
    UNIQUE (name, version)
  );
  `,
  // Tasks end to end: customer object kits, Ed25519 signing keys for frozen task specs, and
  // service secrets (the HMAC key behind signed shipping-label URLs).
  `
  CREATE TABLE kits (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name TEXT NOT NULL,
    status TEXT NOT NULL,           -- registered, received, tracked, available
    status_history TEXT NOT NULL,   -- JSON array of {status, at}
    items TEXT NOT NULL,            -- JSON array of {desc, qty}
    tracking TEXT,                  -- JSON {mocap_markers, mass_g, mesh_scan} once tracked
    created TEXT NOT NULL,
    UNIQUE (account_id, name)
  );
  CREATE INDEX kits_account_created ON kits(account_id, created DESC, id DESC);

  CREATE TABLE signing_keys (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,            -- 'service' or an account id
    public_key_pem TEXT NOT NULL,
    private_key_pem TEXT NOT NULL,
    created TEXT NOT NULL
  );
  CREATE UNIQUE INDEX signing_keys_owner ON signing_keys(owner);

  CREATE TABLE service_secrets (
    name TEXT PRIMARY KEY,          -- e.g. label_url_hmac
    value TEXT NOT NULL,            -- base64url
    created TEXT NOT NULL
  );

  CREATE INDEX tasks_account_created ON tasks(account_id, created DESC, id DESC);
  `,
  // Money and events: quotes, monthly budgets, the webhook outbox (endpoints, events, one delivery
  // row per endpoint and event) and purge receipts.
  `
  CREATE TABLE quotes (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    created TEXT NOT NULL,
    expires TEXT NOT NULL,
    request TEXT NOT NULL,          -- canonical JSON of the quoted run body, defaults filled in
    quote TEXT NOT NULL             -- JSON: the Quote as returned
  );

  CREATE TABLE budgets (
    account_id TEXT PRIMARY KEY REFERENCES accounts(id),
    monthly_usd REAL NOT NULL,
    hard INTEGER NOT NULL,
    updated TEXT NOT NULL
  );

  CREATE TABLE webhook_endpoints (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    url TEXT NOT NULL,
    events TEXT NOT NULL,           -- JSON array of event types
    description TEXT,
    secret TEXT NOT NULL,           -- whsec_...; the HMAC key, so it is kept (not hashed)
    created TEXT NOT NULL,
    deleted TEXT
  );
  CREATE INDEX webhook_endpoints_account ON webhook_endpoints(account_id);

  CREATE TABLE webhook_events (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    type TEXT NOT NULL,
    created TEXT NOT NULL,
    data TEXT NOT NULL              -- JSON
  );

  CREATE TABLE webhook_deliveries (
    event_id TEXT NOT NULL REFERENCES webhook_events(id),
    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id),
    -- pending: to be (re)tried at next_attempt_at; delivered: a 2xx came back;
    -- failed: gave up (max age reached); cancelled: the endpoint was deleted.
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_status INTEGER,            -- HTTP status of the last attempt (null: no response)
    last_error TEXT,
    next_attempt_at TEXT,
    delivered_at TEXT,
    PRIMARY KEY (event_id, endpoint_id)
  );
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at);

  CREATE TABLE purges (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    run_id TEXT NOT NULL REFERENCES runs(id),
    status TEXT NOT NULL,
    purged_at TEXT NOT NULL,
    reason TEXT NOT NULL            -- request (DELETE /v1/data) or retention
  );
  CREATE INDEX purges_run ON purges(run_id);
  `,
  // Run kinds: a run has units (robot pin x environment x policy x task; runs.units, JSON array) and
  // each episode belongs to one (episodes.unit, an index into runs.units; null for kind run) with
  // what its assignment carries beyond the seed (episodes.assign, JSON: replay_spec, pair, role,
  // phase). runs.kind_state holds what a kind decides while it runs (sequential decisions,
  // threshold phases). CI gates and their checks.
  `
  ALTER TABLE runs ADD COLUMN units TEXT;
  ALTER TABLE runs ADD COLUMN kind_state TEXT;
  ALTER TABLE episodes ADD COLUMN unit INTEGER;
  ALTER TABLE episodes ADD COLUMN assign TEXT;
  CREATE INDEX episodes_run_unit_status ON episodes(run_id, unit, status);

  CREATE TABLE gates (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    created TEXT NOT NULL,
    spec TEXT NOT NULL              -- JSON: {suite, repo, ref_pattern, policy, robots, baseline}
  );
  CREATE INDEX gates_account ON gates(account_id, created DESC);

  CREATE TABLE gate_checks (
    id TEXT PRIMARY KEY,
    gate_id TEXT NOT NULL REFERENCES gates(id),
    account_id TEXT NOT NULL REFERENCES accounts(id),
    created TEXT NOT NULL,
    ref TEXT NOT NULL,
    commit_sha TEXT,
    run_id TEXT NOT NULL REFERENCES runs(id),
    status TEXT NOT NULL,           -- pending, passed, failed
    decided TEXT,                   -- JSON: {regression, baseline_run_id, detail} once decided
    decided_at TEXT
  );
  CREATE INDEX gate_checks_gate ON gate_checks(gate_id, created DESC);
  `,
  // Run exports (POST /v1/runs/{run_id}/export): one row per requested archive, prepared off the
  // request path by the export worker (coordinator/exports/export-worker.ts). Calibration exports
  // (POST /v1/calibration/exports) for simulator vendors, signed with the service key.
  `
  CREATE TABLE exports (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    run_id TEXT NOT NULL REFERENCES runs(id),
    format TEXT NOT NULL,           -- lerobot, rlds, mcap-bundle
    -- preparing, ready, failed, expired (see coordinator/domain/export-state.ts)
    status TEXT NOT NULL,
    created TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    episodes_total INTEGER NOT NULL,
    episodes_done INTEGER NOT NULL DEFAULT 0,
    episodes TEXT NOT NULL,         -- JSON: {included, excluded: {reason: count}, train_on_failures}
    file_name TEXT,
    bytes INTEGER,
    sha256 TEXT,
    ready_at TEXT,
    expires_at TEXT,
    failure_reason TEXT,
    failure_message TEXT
  );
  CREATE INDEX exports_run ON exports(run_id, created DESC);
  CREATE INDEX exports_status ON exports(status);

  CREATE TABLE calibration_exports (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    created TEXT NOT NULL,
    status TEXT NOT NULL,           -- preparing, ready, failed, expired
    request TEXT NOT NULL,          -- JSON: {runs, licensee, purpose}
    license TEXT NOT NULL,          -- JSON: the license terms as signed
    attempts INTEGER NOT NULL DEFAULT 0,
    episodes INTEGER,               -- episodes shipped, once ready
    file_name TEXT,
    bytes INTEGER,
    sha256 TEXT,
    signature TEXT,
    ready_at TEXT,
    expires_at TEXT,
    failure_reason TEXT,
    failure_message TEXT
  );
  CREATE INDEX calibration_exports_account ON calibration_exports(account_id, created DESC);
  `,
  // Policy models (POST /v1/models): ONNX checkpoints a customer uploads in resumable chunks, or an
  // operator's local mirror supplies, referenced by `policy.hf` and sent to the cells that run them.
  `
  CREATE TABLE models (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name TEXT NOT NULL,             -- Hugging Face style "org/name"
    revision TEXT NOT NULL,         -- "main" unless named
    format TEXT NOT NULL,           -- onnx
    source TEXT NOT NULL,           -- upload, mirror
    status TEXT NOT NULL,           -- uploading, ready, failed, deleted, expired
    created TEXT NOT NULL,
    bytes INTEGER NOT NULL,         -- declared size
    sha256 TEXT NOT NULL,           -- declared hash, checked when the last byte arrives
    received_bytes INTEGER NOT NULL DEFAULT 0,
    retention TEXT NOT NULL,        -- e.g. 90d, counted from ready_at
    description TEXT,               -- JSON: the model's declared inputs and outputs, once ready
    ready_at TEXT,
    ended_at TEXT,                  -- deleted, expired or failed at
    failure_message TEXT
  );
  CREATE INDEX models_account ON models(account_id, created DESC);
  CREATE INDEX models_name ON models(account_id, name, revision, status);
  `,
  // Large runs are created without blocking the event loop: the run and its first episodes commit
  // together, the rest in later transactions (runs-repo.ts backfillEpisodes). `backfill` holds what
  // is left to insert, so a crash in between resumes it at start-up; null once every episode exists.
  `
  ALTER TABLE runs ADD COLUMN backfill TEXT;
  `,
  // Leaderboards: the name an opted-in account's published results appear under.
  `
  ALTER TABLE accounts ADD COLUMN leaderboard_name TEXT;
  `,
  // The order rows were written in: lastStatusCell reads the newest. SQLite has it as rowid;
  // PostgreSQL has no rowid, so a sequence column.
  {
    sqlite: "SELECT 1;",
    postgres: "ALTER TABLE run_status_history ADD COLUMN seq BIGINT GENERATED ALWAYS AS IDENTITY;",
  },
  // Several coordinators on one database (docs/deploy.md). Each live coordinator holds a lease it
  // renews; a cell's open link is recorded against the coordinator holding its stream; an archive
  // being made is leased to the coordinator making it, so no other one makes it at the same time.
  `
  CREATE TABLE coordinators (
    id TEXT PRIMARY KEY,
    started TEXT NOT NULL,
    alive_until TEXT NOT NULL,      -- renewed every few seconds; past it, the coordinator is gone
    base_url TEXT NOT NULL,
    grpc_address TEXT NOT NULL
  );
  CREATE TABLE cell_links (
    cell_id TEXT PRIMARY KEY,
    coordinator_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    connected_at TEXT NOT NULL,
    view TEXT NOT NULL,             -- JSON: the cell as GET /v1/cells shows it, refreshed as it changes
    updated TEXT NOT NULL
  );
  ALTER TABLE exports ADD COLUMN lease_until TEXT;
  ALTER TABLE calibration_exports ADD COLUMN lease_until TEXT;
  `,
  // Operator time: wall-clock seconds a person spent setting the scene before the finished attempt
  // (EpisodeFinished.operator_reset_s); null when the cell did not say (a reset that needed nobody).
  `
  ALTER TABLE episodes ADD COLUMN operator_reset_s REAL;
  `,
  // The ICC prior learns from the fleet (docs/statistics.md, "The prior learns from the fleet"): one
  // row per fit that changed the prior of a robot model and environment class; the current one has
  // superseded NULL. Only the fitted prior is stored, never the runs it came from. A run records the
  // priors it was submitted under (JSON: "<model>/<environment class>" -> prior), so its result never
  // changes after it is issued.
  `
  CREATE TABLE headline_priors (
    robot_model TEXT NOT NULL,
    environment_class TEXT NOT NULL,
    family TEXT NOT NULL,           -- beta: the ICC prior's family
    parameters TEXT NOT NULL,       -- JSON {a, b}
    fitted_on_runs INTEGER NOT NULL,
    fitted_at TEXT NOT NULL,
    superseded TEXT                 -- when a later fit replaced it; NULL while current
  );
  CREATE INDEX headline_priors_current ON headline_priors(robot_model, environment_class, superseded);
  ALTER TABLE runs ADD COLUMN headline_priors TEXT;
  `,
  // Success labels judged by a person at the operator station (docs/operators.md): who judged the
  // outcome, the person's 0-100 progress score and note, and the seconds the cell waited for the label.
  `
  ALTER TABLE episodes ADD COLUMN judged_by TEXT;
  ALTER TABLE episodes ADD COLUMN progress REAL;
  ALTER TABLE episodes ADD COLUMN label_note TEXT;
  ALTER TABLE episodes ADD COLUMN operator_label_s REAL;
  `,
  // Paging (docs/operators.md, "Paging"): one row per attention episode of a cell (what it needed, for
  // which episode, since when) that raised cell.attention_needed, so a restarted coordinator that
  // learns the same attention again never raises it twice.
  `
  CREATE TABLE attention_pages (
    cell_id TEXT NOT NULL,
    kind TEXT NOT NULL,             -- reset | label
    episode_id TEXT NOT NULL,
    since TEXT NOT NULL,            -- ISO time the cell started waiting
    raised_at TEXT NOT NULL,
    event_id TEXT,                  -- the webhook event (evt_...)
    PRIMARY KEY (cell_id, kind, episode_id, since)
  );
  `,
  // Named runs (docs/api.md, "Names and metadata"): a run's current name and metadata (JSON object of
  // strings; both changeable with POST /v1/runs/{run_id}), `run_metadata` to find runs by a metadata
  // key and value, and `run_facets` to find them by task (name and revision), robot (model and pin)
  // and the policy name the runs list shows, filled at insert from each unit (store/run-list-repo.ts)
  // and here for the runs already stored.
  {
    sqlite: `
  ALTER TABLE runs ADD COLUMN name TEXT;
  ALTER TABLE runs ADD COLUMN metadata TEXT;
  CREATE TABLE run_metadata (
    run_id TEXT NOT NULL REFERENCES runs(id),
    account_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
  );
  CREATE INDEX run_metadata_search ON run_metadata(account_id, key, value);
  CREATE TABLE run_facets (
    run_id TEXT NOT NULL REFERENCES runs(id),
    account_id TEXT NOT NULL,
    facet TEXT NOT NULL,            -- task | robot | policy
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, facet, value)
  );
  CREATE INDEX run_facets_search ON run_facets(account_id, facet, value);
  WITH u AS (
    SELECT id, account_id, json_extract(resolved_pins, '$.task') AS task, json_extract(resolved_pins, '$.robot') AS robot, json_extract(plan, '$.model') AS model,
      COALESCE(NULLIF(trim(json_extract(request, '$.policy_name')), ''), json_extract(request, '$.policy.image'), json_extract(request, '$.policy.hf'), 'endpoint policy') AS policy
    FROM runs WHERE units IS NULL
    UNION ALL
    SELECT r.id, r.account_id, json_extract(e.value, '$.task'), json_extract(e.value, '$.robot'), json_extract(e.value, '$.model'),
      COALESCE(json_extract(e.value, '$.policy_name'), NULLIF(trim(json_extract(r.request, '$.policy_name')), ''), json_extract(e.value, '$.policy.image'), json_extract(e.value, '$.policy.hf'), 'endpoint policy')
    FROM runs r, json_each(r.units) e WHERE r.units IS NOT NULL
  )
  INSERT INTO run_facets (run_id, account_id, facet, value)
  SELECT id, account_id, 'task', task FROM u WHERE task IS NOT NULL
  UNION SELECT id, account_id, 'task', substr(task, 1, instr(task, '@v') - 1) FROM u WHERE instr(task, '@v') > 1
  UNION SELECT id, account_id, 'robot', robot FROM u WHERE robot IS NOT NULL
  UNION SELECT id, account_id, 'robot', model FROM u WHERE model IS NOT NULL
  UNION SELECT id, account_id, 'policy', policy FROM u WHERE true
  ON CONFLICT DO NOTHING;
  `,
    postgres: `
  ALTER TABLE runs ADD COLUMN name TEXT COLLATE "C";
  ALTER TABLE runs ADD COLUMN metadata TEXT COLLATE "C";
  CREATE TABLE run_metadata (
    run_id TEXT COLLATE "C" NOT NULL REFERENCES runs(id),
    account_id TEXT COLLATE "C" NOT NULL,
    key TEXT COLLATE "C" NOT NULL,
    value TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (run_id, key)
  );
  CREATE INDEX run_metadata_search ON run_metadata(account_id, key, value);
  CREATE TABLE run_facets (
    run_id TEXT COLLATE "C" NOT NULL REFERENCES runs(id),
    account_id TEXT COLLATE "C" NOT NULL,
    facet TEXT COLLATE "C" NOT NULL,
    value TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (run_id, facet, value)
  );
  CREATE INDEX run_facets_search ON run_facets(account_id, facet, value);
  WITH u AS (
    SELECT id, account_id, resolved_pins::jsonb ->> 'task' AS task, resolved_pins::jsonb ->> 'robot' AS robot, plan::jsonb ->> 'model' AS model,
      COALESCE(NULLIF(trim(request::jsonb ->> 'policy_name'), ''), request::jsonb #>> '{policy,image}', request::jsonb #>> '{policy,hf}', 'endpoint policy') AS policy
    FROM runs WHERE units IS NULL
    UNION ALL
    SELECT r.id, r.account_id, e.value ->> 'task', e.value ->> 'robot', e.value ->> 'model',
      COALESCE(e.value ->> 'policy_name', NULLIF(trim(r.request::jsonb ->> 'policy_name'), ''), e.value #>> '{policy,image}', e.value #>> '{policy,hf}', 'endpoint policy')
    FROM runs r, jsonb_array_elements(r.units::jsonb) AS e(value) WHERE r.units IS NOT NULL
  )
  INSERT INTO run_facets (run_id, account_id, facet, value)
  SELECT id, account_id, 'task', task FROM u WHERE task IS NOT NULL
  UNION SELECT id, account_id, 'task', substr(task, 1, strpos(task, '@v') - 1) FROM u WHERE strpos(task, '@v') > 1
  UNION SELECT id, account_id, 'robot', robot FROM u WHERE robot IS NOT NULL
  UNION SELECT id, account_id, 'robot', model FROM u WHERE model IS NOT NULL
  UNION SELECT id, account_id, 'policy', policy FROM u
  ON CONFLICT DO NOTHING;
  `,
  },
  // docs/storage.md "A bounded wait for recordings": when a run completed without this artifact (still pending, so a
  // late upload is taken); NULL otherwise. The partial index serves the reads of pending rows across runs.
  `
  ALTER TABLE artifacts ADD COLUMN missing_since TEXT;
  CREATE INDEX artifacts_pending ON artifacts(run_id) WHERE status = 'pending';
  `,
  // A run's artifact aggregates as index lookups (summarizeRunArtifacts, anyArtifactStoredBy: an export's check, the
  // retention sweep): is any file purged or past retention, when was the first stored. Over a 10,000-episode run's
  // 40,000 rows they read every row, 8-15 ms each on SQLite.
  `
  CREATE INDEX artifacts_run_status ON artifacts(run_id, status, stored_at);
  CREATE INDEX artifacts_run_stored ON artifacts(run_id, stored_at);
  `,
];
