-- indexes.sql: built once the bulk load is over (building them while
-- inserting costs more than building them after). There is no index on
-- records(file_id, line): rowid order already is file and line order, and
-- files.first_record gives where a file's records start.
-- Nor on records(ts) or records(pod, ts): building them cost over a second
-- per GB of logs each. A time window over every record is one scan; the
-- timeline's tagged records come through signal_matches; one pod's or one
-- file's records are the files' id ranges and time spans
-- (files.first_record..last_record, first_ts..last_ts).
CREATE INDEX IF NOT EXISTS signal_matches_signal ON signal_matches(pack, signal);
CREATE INDEX IF NOT EXISTS http_requests_ts ON http_requests(ts);
CREATE INDEX IF NOT EXISTS gpu_samples_node_ts ON gpu_samples(node, gpu_index, ts);
CREATE INDEX IF NOT EXISTS k8s_events_obj ON k8s_events(object_name, ts);
CREATE INDEX IF NOT EXISTS pod_states_pod ON pod_states(pod, container);
CREATE INDEX IF NOT EXISTS pod_states_ip ON pod_states(pod_ip);
CREATE INDEX IF NOT EXISTS config_settings_key ON config_settings(key);
