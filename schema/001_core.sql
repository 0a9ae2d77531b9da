-- 001_core.sql: inquest's database, version 4. Everything the report says
-- can be reproduced with SQL against these tables. Times are UTC
-- nanoseconds since 1970 (INTEGER); NULL when unknown.

-- Key/value facts about the database: schema version, tool version,
-- bundles ingested.
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT
) STRICT;

-- One row per file of the bundle (a member of an archive, nested ones
-- included). path is stable: "bundle.tgz!nodes/a.tar.gz!var/log/kern.log".
-- Line accounting: lines_read = lines_parsed + lines_skipped; skips says why.
-- status: 'reading' while it is ingested (a crashed run leaves it so and the
-- next run reads it again), 'done', 'error' (read stopped: see error),
-- 'unknown' (no format recognised), 'binary', 'empty', 'cut' (read up to
-- --max-member-bytes or --max-bundle-bytes: the rest is not in the
-- database; problems says which), 'duplicate' (the same bytes as another
-- file of the bundle, named in error: its lines are skipped).
-- first_record..last_record: the ids of the file's records (one writer
-- writes one file at a time, so they are consecutive); first_ts..last_ts:
-- the time span of its records (NULL when none has a time), which tells
-- without a scan which files a time window touches.
CREATE TABLE IF NOT EXISTS files (
  id            INTEGER PRIMARY KEY,
  path          TEXT NOT NULL UNIQUE,
  bundle        TEXT NOT NULL,
  format        TEXT,
  sniff_reason  TEXT,
  bytes         INTEGER,             -- decompressed bytes read
  mtime         INTEGER,
  node          TEXT,                -- identity from the path
  namespace     TEXT,
  pod           TEXT,
  container     TEXT,
  restart       INTEGER,
  lines_read    INTEGER NOT NULL DEFAULT 0,
  lines_parsed  INTEGER NOT NULL DEFAULT 0,
  lines_skipped INTEGER NOT NULL DEFAULT 0,
  records       INTEGER NOT NULL DEFAULT 0,
  cut_lines     INTEGER NOT NULL DEFAULT 0,  -- lines cut at the length cap
  nul_bytes     INTEGER NOT NULL DEFAULT 0,  -- NUL bytes dropped (zeroed blocks)
  status        TEXT NOT NULL DEFAULT 'reading',
  error         TEXT,
  first_record  INTEGER,
  last_record   INTEGER,
  first_ts      INTEGER,
  last_ts       INTEGER
) STRICT;

-- Lines of a file that gave no record, grouped by reason.
CREATE TABLE IF NOT EXISTS skips (
  file_id    INTEGER NOT NULL REFERENCES files(id),
  reason     TEXT NOT NULL,
  lines      INTEGER NOT NULL,
  first_line INTEGER NOT NULL,
  example    TEXT,
  PRIMARY KEY (file_id, reason)
) STRICT;

-- What the bundle walker could not read: corrupt archives, links not
-- followed, members over a size limit.
CREATE TABLE IF NOT EXISTS problems (
  id      INTEGER PRIMARY KEY,
  path    TEXT NOT NULL,
  message TEXT NOT NULL
) STRICT;

-- One row per parsed record. line is the first line of the record in its
-- file, nlines how many it spans; but a Python traceback is placed at its
-- exception line (the line evidence cites, also in quotes), its nlines
-- counting from its "Traceback" line before it. ts_how: explicit, assumed_utc,
-- year_inferred, boot_relative, inherited, none. kind: log, event, http,
-- gpu, kernel, pod, config (a typed table below holds the columns of all
-- but log).
CREATE TABLE IF NOT EXISTS records (
  id        INTEGER PRIMARY KEY,
  file_id   INTEGER NOT NULL REFERENCES files(id),
  line      INTEGER NOT NULL,
  nlines    INTEGER NOT NULL,
  ts        INTEGER,
  ts_how    TEXT NOT NULL,
  ts_raw    TEXT,
  kind      TEXT NOT NULL,
  node      TEXT,
  namespace TEXT,
  pod       TEXT,
  container TEXT,
  stream    TEXT,
  severity  TEXT,
  text      TEXT NOT NULL
) STRICT;

-- Load balancer requests (records of kind http). status is what the client
-- got; the upstream attempts are in http_upstreams.
CREATE TABLE IF NOT EXISTS http_requests (
  record_id     INTEGER PRIMARY KEY REFERENCES records(id),
  ts            INTEGER,
  client        TEXT,
  method        TEXT,
  path          TEXT,
  status        INTEGER,
  bytes_sent    INTEGER,
  duration_s    REAL,
  upstream_name TEXT,
  request_id    TEXT,
  host          TEXT,
  user_agent    TEXT
) STRICT;

-- One row per upstream attempt of a request (retries give several), in
-- (record_id, attempt) order: the table is its primary key's B-tree
-- (WITHOUT ROWID), so a row costs one insert, not a row and an index entry.
CREATE TABLE IF NOT EXISTS http_upstreams (
  record_id INTEGER NOT NULL REFERENCES records(id),
  attempt   INTEGER NOT NULL,          -- 0, 1, ... in the order tried
  addr      TEXT,                      -- ip:port
  status    INTEGER,
  time_s    REAL,
  PRIMARY KEY (record_id, attempt)
) STRICT, WITHOUT ROWID;

-- GPU samples (records of kind gpu): memory in MiB, utilisation in %.
CREATE TABLE IF NOT EXISTS gpu_samples (
  record_id     INTEGER PRIMARY KEY REFERENCES records(id),
  ts            INTEGER,
  node          TEXT,
  gpu_index     INTEGER,
  uuid          TEXT,
  pci_bus       TEXT,
  name          TEXT,
  mem_used_mib  REAL,
  mem_total_mib REAL,
  mem_free_mib  REAL,
  util_gpu_pct  REAL,
  util_mem_pct  REAL,
  temp_c        REAL,
  power_w       REAL
) STRICT;

-- Kubernetes events (records of kind event). ts is the last time seen;
-- count the occurrences coalesced into the event. first_ts and last_ts are
-- written by the reporting component (a kubelet: on its node's clock,
-- host), created_ts by the API server when it stored the event: the same
-- instant as first_ts on the reference clock (detect/skew.c).
CREATE TABLE IF NOT EXISTS k8s_events (
  record_id   INTEGER PRIMARY KEY REFERENCES records(id),
  ts          INTEGER,
  namespace   TEXT,
  object_kind TEXT,
  object_name TEXT,
  type        TEXT,
  reason      TEXT,
  message     TEXT,
  count       INTEGER,
  first_ts    INTEGER,
  last_ts     INTEGER,
  source      TEXT,
  host        TEXT,
  created_ts  INTEGER          -- metadata.creationTimestamp (API server clock)
) STRICT;

-- Kernel messages (records of kind kernel). boot_s: seconds since boot as
-- printed by dmesg, when present.
CREATE TABLE IF NOT EXISTS kernel_events (
  record_id INTEGER PRIMARY KEY REFERENCES records(id),
  ts        INTEGER,
  node      TEXT,
  host      TEXT,
  facility  TEXT,
  boot_s    REAL
) STRICT;

-- Container statuses from pod listings (records of kind pod): the current
-- state and how the previous instance ended (last_*). exit_code 1 with
-- reason Error is how a CUDA OOM death looks; 137 with OOMKilled is the
-- host-memory killer.
CREATE TABLE IF NOT EXISTS pod_states (
  record_id        INTEGER PRIMARY KEY REFERENCES records(id),
  ts               INTEGER,
  namespace        TEXT,
  pod              TEXT,
  uid              TEXT,
  node             TEXT,
  pod_ip           TEXT,
  phase            TEXT,
  container        TEXT,
  container_id     TEXT,
  image            TEXT,
  restart_count    INTEGER,
  ready            INTEGER,
  state            TEXT,
  reason           TEXT,
  exit_code        INTEGER,
  started_at       INTEGER,
  finished_at      INTEGER,
  last_reason      TEXT,
  last_exit_code   INTEGER,
  last_started_at  INTEGER,
  last_finished_at INTEGER,
  ready_since      INTEGER  -- the pod's Ready condition True since (lastTransitionTime)
) STRICT;

-- Settings from configs, manifests and command lines (records of kind
-- config), keys normalised (max_num_seqs, gpu_memory_utilization, ...).
CREATE TABLE IF NOT EXISTS config_settings (
  record_id INTEGER PRIMARY KEY REFERENCES records(id),
  scope     TEXT,
  key       TEXT NOT NULL,
  value     TEXT,
  source    TEXT
) STRICT;

-- Verbatim pieces of the file that say what a structured record says
-- (its text is a restatement: "Warning BackOff pod/x: Back-off ..."): the
-- line and text of a JSON event's "message" member, a container status's
-- "reason", a metric sample's own line, a manifest's argument. what names
-- the field (message, reason, last_reason, value, arg, ...). Evidence
-- quotes these; a record without one stands verbatim at its own line.
CREATE TABLE IF NOT EXISTS quotes (
  record_id INTEGER NOT NULL REFERENCES records(id),
  n         INTEGER NOT NULL,        -- 0 first: what the record is cited for by default
  what      TEXT NOT NULL,
  line      INTEGER NOT NULL,
  text      TEXT NOT NULL,
  PRIMARY KEY (record_id, n)
) STRICT, WITHOUT ROWID;

-- Which rule-pack signals a record matched, with the named captures as a
-- JSON object (sizes also as <name>_bytes).
CREATE TABLE IF NOT EXISTS signal_matches (
  record_id INTEGER NOT NULL REFERENCES records(id),
  pack      TEXT NOT NULL,
  signal    TEXT NOT NULL,
  captures  TEXT,
  PRIMARY KEY (record_id, pack, signal)
) STRICT, WITHOUT ROWID;

-- Two summaries the ingest keeps so that the report need not read every
-- record again. They are complete when meta has 'summaries' (set when the
-- database is created); a database an older inquest wrote lacks it, and
-- the report computes them with the SQL given here instead.
-- error_records: the records the unexplained-errors appendix considers
-- (the filter of the query it prints: an error or warning severity, or an
-- error word in the text of a log, kernel or event record) that no line
-- signal tagged when they were stored.
CREATE TABLE IF NOT EXISTS error_records (
  record_id INTEGER PRIMARY KEY REFERENCES records(id)
) STRICT;
-- time_sources: records per ts_how, SELECT ts_how, count(*) FROM records
-- GROUP BY ts_how (detect keeps it when it changes ts_how).
CREATE TABLE IF NOT EXISTS time_sources (
  ts_how  TEXT PRIMARY KEY,
  records INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- The findings of each rule pack that ran: the pattern object of
-- findings.json, verbatim.
CREATE TABLE IF NOT EXISTS findings (
  pack     TEXT PRIMARY KEY,
  verdict  TEXT NOT NULL,
  json     TEXT NOT NULL
) STRICT;

-- Each node's clock against the reference (the load balancer, the API
-- server, the collector): offset is node minus reference, in ns, measured
-- only from one instant seen on both clocks (detect/skew.c). bases holds
-- every basis found, as JSON [{basis, offset_s, uncertainty_s, samples,
-- spread_s, agree, what}]: chrony (the node's NTP client's own offset),
-- collector (a collector's line quoting the node's date), requests
-- (request ids in the LB's and the pods' logs), access (pods' access-log
-- lines matched by path and time to the LB's responses), events (kubelet
-- events' firstTimestamp against the API server's creationTimestamp),
-- deaths (CUDA OOM lines against the LB's first failure). The most
-- precise gives offset_ns, uncertainty_ns, samples and spread_ns; status
-- says what was done: corrected, small (within its uncertainty of zero),
-- spread (its samples disagree), disagree (two bases do), implausible
-- (more than a synchronised node drifts), none (no basis: offset_ns is
-- NULL). basis says it in words. applied is how much was subtracted from
-- the node's times (its logs, kernel messages and nvidia-smi samples;
-- ts_how becomes 'skew_corrected'), so that a second run corrects only
-- what is left.
CREATE TABLE IF NOT EXISTS clock_skew (
  node           TEXT PRIMARY KEY,
  offset_ns      INTEGER,
  applied_ns     INTEGER NOT NULL DEFAULT 0,
  samples        INTEGER NOT NULL,
  basis          TEXT NOT NULL,
  spread_ns      INTEGER,
  uncertainty_ns INTEGER,
  status         TEXT NOT NULL DEFAULT 'none',
  bases          TEXT
) STRICT;

-- Who is who: every pod, container and node the bundle names, with the
-- pod IP and container ID where pod status gives them (source
-- 'pod-status') and the pods seen only in log paths ('log-path').
CREATE VIEW IF NOT EXISTS identities AS
  SELECT DISTINCT namespace, pod, uid AS pod_uid, node, pod_ip, container, container_id,
         'pod-status' AS source
  FROM pod_states
  UNION
  SELECT DISTINCT namespace, pod, NULL, node, NULL, container, NULL, 'log-path'
  FROM files WHERE pod IS NOT NULL;

-- Each upstream attempt of the load balancer with the pod and node behind
-- its address (through the pod IPs of pod status): "which pod answered
-- this 502?". pod is NULL when no pod had that IP.
CREATE VIEW IF NOT EXISTS upstream_pods AS
  SELECT u.record_id, u.attempt, h.ts, u.addr, u.status, h.status AS client_status,
         p.namespace, p.pod, p.node
  FROM http_upstreams u JOIN http_requests h ON h.record_id = u.record_id
  LEFT JOIN (SELECT DISTINCT namespace, pod, node, pod_ip FROM pod_states
             WHERE pod_ip IS NOT NULL) p
    ON u.addr = p.pod_ip OR u.addr LIKE p.pod_ip || ':%';

-- The GPUs seen in metric samples, with pci_key, the bus and device in
-- the one spelling both nvidia-smi ("00000000:3B:00.0") and the driver's
-- Xid lines ("PCI:0000:3b:00") reduce to: "3b:00".
CREATE VIEW IF NOT EXISTS gpus AS
  SELECT DISTINCT node, gpu_index, uuid, pci_bus, name,
         lower(substr(pci_bus, instr(pci_bus, ':') + 1, 5)) AS pci_key
  FROM gpu_samples WHERE uuid IS NOT NULL OR pci_bus IS NOT NULL;

-- Every record with its file, source format and the signals it matched:
-- the merged timeline across all sources, in time order when sorted by ts;
-- time is ts as RFC 3339 UTC with milliseconds.
CREATE VIEW IF NOT EXISTS timeline AS
  SELECT r.id AS record_id, r.ts,
         CASE WHEN r.ts IS NULL THEN NULL ELSE
           strftime('%Y-%m-%dT%H:%M:%S', r.ts / 1000000000, 'unixepoch')
           || printf('.%03dZ', (r.ts / 1000000) % 1000) END AS time,
         r.node, r.namespace, r.pod, r.container,
         f.format AS source, r.kind, r.severity, r.text,
         (SELECT group_concat(signal, ',') FROM (SELECT DISTINCT signal FROM signal_matches m
           WHERE m.record_id = r.id ORDER BY signal)) AS tags,
         f.path AS file, r.line
  FROM records r JOIN files f ON f.id = r.file_id;
