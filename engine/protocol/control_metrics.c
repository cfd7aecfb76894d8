/*
 * The metrics text of `airlock ctl metrics` (docs/operations.md): the
 * snapshot and the server's counters as OpenMetrics, "# EOF" last.
 */
#include "control.h"

#include <stdio.h>
#include <stdlib.h>

static void
family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# TYPE %s %s\n# HELP %s %s\n", name, type, name, help);
}

static void
metric_sessions(FILE *f, const struct supervisor_snapshot *s)
{
	size_t by_state[SESSION_STATE_COUNT] = { 0 }, by_end[SESSION_END_COUNT] = { 0 }, i;
	int k;

	for (i = 0; i < s->n; i++) {
		by_state[(unsigned)s->rows[i].state % SESSION_STATE_COUNT]++;
		if (s->rows[i].state == SESSION_STATE_ENDED)
			by_end[(unsigned)s->rows[i].end % SESSION_END_COUNT]++;
	}
	family(f, "airlock_sessions", "gauge", "Sessions the engine holds, by state.");
	for (k = 0; k < SESSION_STATE_COUNT; k++)
		fprintf(f, "airlock_sessions{state=\"%s\"} %zu\n",
			session_state_id((enum session_state)k), by_state[k]);
	family(f, "airlock_sessions_ended", "gauge",
	       "Ended sessions the engine still holds, by how they ended.");
	for (k = 1; k < SESSION_END_COUNT; k++)
		fprintf(f, "airlock_sessions_ended{end=\"%s\"} %zu\n",
			session_end_id((enum session_end)k), by_end[k]);
	family(f, "airlock_watchdog_stops", "gauge",
	       "Held sessions the watchdog or a lost lease ended (watchdog_failed).");
	fprintf(f, "airlock_watchdog_stops %zu\n", by_end[SESSION_END_WATCHDOG_FAILED]);
	family(f, "airlock_sessions_started", "counter", "Sessions started since the engine opened.");
	fprintf(f, "airlock_sessions_started_total %llu\n", (unsigned long long)s->started_total);
}

static void
metric_calls(FILE *f, const struct supervisor_snapshot *s)
{
	uint64_t allowed = 0, denied = 0, egress = 0;
	size_t i;

	for (i = 0; i < s->n; i++) {
		allowed += s->rows[i].counters.allowed;
		denied += s->rows[i].counters.denied;
		egress += s->rows[i].counters.egress_denied;
	}
	family(f, "airlock_calls", "counter",
	       "Tool calls of the held sessions, by decision (egress_denied is part of denied).");
	fprintf(f, "airlock_calls_total{decision=\"allowed\"} %llu\n", (unsigned long long)allowed);
	fprintf(f, "airlock_calls_total{decision=\"denied\"} %llu\n", (unsigned long long)denied);
	fprintf(f, "airlock_calls_total{decision=\"egress_denied\"} %llu\n",
		(unsigned long long)egress);
}

static void
metric_counter(FILE *f, const char *name, const char *help, uint64_t v)
{
	family(f, name, "counter", help);
	fprintf(f, "%s_total %llu\n", name, (unsigned long long)v);
}

static void
metric_gauge(FILE *f, const char *name, const char *help, uint64_t v)
{
	family(f, name, "gauge", help);
	fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

void
control_count_ack(struct control_counts *c, int64_t waited_us)
{
	static const int64_t le[CONTROL_ACK_BUCKETS] = CONTROL_ACK_BUCKETS_US;
	size_t i;

	waited_us = waited_us < 0 ? 0 : waited_us;
	c->acks++;
	c->ack_sum_us += (uint64_t)waited_us;
	for (i = 0; i < CONTROL_ACK_BUCKETS; i++)
		c->ack_le[i] += waited_us <= le[i];
}

/* How long sessions took to acknowledge a cutover, freeze or thaw. */
static void
metric_acks(FILE *f, const struct control_counts *c)
{
	static const int64_t le[CONTROL_ACK_BUCKETS] = CONTROL_ACK_BUCKETS_US;
	size_t i;

	fprintf(f, "# TYPE airlock_cutover_ack_seconds histogram\n"
		   "# UNIT airlock_cutover_ack_seconds seconds\n"
		   "# HELP airlock_cutover_ack_seconds How long each session took to acknowledge a "
		   "revoke, restore, freeze or thaw (behind its call in flight).\n");
	for (i = 0; i < CONTROL_ACK_BUCKETS; i++)
		fprintf(f, "airlock_cutover_ack_seconds_bucket{le=\"%g\"} %llu\n", (double)le[i] / 1e6,
			(unsigned long long)c->ack_le[i]);
	fprintf(f, "airlock_cutover_ack_seconds_bucket{le=\"+Inf\"} %llu\n"
		   "airlock_cutover_ack_seconds_sum %.6f\nairlock_cutover_ack_seconds_count %llu\n",
		(unsigned long long)c->acks, (double)c->ack_sum_us / 1e6,
		(unsigned long long)c->acks);
}

char *
control_metrics_text(const struct supervisor_snapshot *s, const struct control_counts *c)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	metric_sessions(f, s);
	metric_calls(f, s);
	metric_counter(f, "airlock_lease_failures", "Leases that failed (LEASE_FAILED events).",
		       c->lease_failures);
	metric_counter(f, "airlock_cutovers",
		       "Revokes, restores, freezes and thaws the engine carried out.", c->cutovers);
	metric_acks(f, c);
	metric_counter(f, "airlock_audit_failures", "Audit entries the log refused.",
		       s->audit_failures);
	metric_counter(f, "airlock_events_dropped", "Engine events lost to a full queue.",
		       s->events_dropped + s->alerts_dropped);
	metric_gauge(f, "airlock_containers_left", "Ended sessions' containers not yet removed.",
		     s->containers_left);
	metric_gauge(f, "airlock_frozen", "1 while the kill switch denies every call.", s->frozen);
	metric_gauge(f, "airlock_clients", "Control clients connected.", c->clients);
	metric_counter(f, "airlock_clients_refused", "Peers refused at accept.", c->refused);
	metric_counter(f, "airlock_view_changes_refused", "Changes a view-role peer asked for, "
		       "refused.", c->refused_view);
	metric_counter(f, "airlock_frames_dropped", "Pushed frames dropped for slow clients.",
		       c->dropped);
	metric_counter(f, "airlock_control_bytes_sent",
		       "Bytes written to control clients (replies and pushed frames).", c->bytes_sent);
	family(f, "airlock_snapshots_pushed", "counter",
	       "Snapshots pushed to subscribed clients, whole or as a delta on the client's last.");
	fprintf(f, "airlock_snapshots_pushed_total{form=\"whole\"} %llu\n"
		   "airlock_snapshots_pushed_total{form=\"delta\"} %llu\n",
		(unsigned long long)c->pushed_whole, (unsigned long long)c->pushed_delta);
	fprintf(f, "# TYPE airlock_engine_rss_bytes gauge\n# UNIT airlock_engine_rss_bytes bytes\n"
		   "# HELP airlock_engine_rss_bytes The engine's resident set.\n"
		   "airlock_engine_rss_bytes %llu\n# EOF\n", (unsigned long long)c->rss_bytes);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}
