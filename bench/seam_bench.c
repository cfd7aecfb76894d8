/*
 * The engine seam driven the way the console drives it, against the real
 * daemon: N live sessions (a permitted call every 200 ms each; the last
 * one started has an upstream that holds its first call 10 s), one revoke
 * across all sessions with that call in flight, then snapshots at 4 Hz.
 *
 * Prints the cost of a snapshot (changed and unchanged rows) and of a
 * detail read, beside a plain memcpy of the same bytes as the floor, and
 * the time from the revoke to every acknowledgement.
 *
 * usage: seam_bench AIRLOCK AGENT_IMAGE UPSTREAM [N] [SECONDS]
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_config.h"
#include "clock.h"
#include "supervisor.h"

static const char *airlock, *image, *upstream;
static char work[] = "/tmp/airlock-seam-XXXXXX";

static void
print_stats(const char *label, double *v, size_t n, const char *unit)
{
	if (n == 0) {
		printf("  %-44s n=0\n", label);
		return;
	}
	bench_sort(v, n);
	printf("  %-44s n=%-5zu p50 %9.1f  p90 %9.1f  max %9.1f %s\n", label, n, v[n / 2],
	       v[(size_t)(n * 0.9)], v[n - 1], unit);
}

static void
make_config(struct airlock_config *c, size_t i, bool slow)
{
	char text[2048];

	snprintf(text, sizeof text,
		 "{\"profile\": {\"image\": \"%s\", \"cmd\": [\"loop\"]},"
		 " \"bounds\": {\"session_ms\": 600000, \"calls\": 4096, \"stdout_bytes\": 4194304},"
		 " \"upstreams\": {\"u\": {\"argv\": [\"%s\", \"--sink\", \"%s/%zu.sink\","
		 "  \"--mode\", \"%s\"], \"timeout_ms\": 30000}},"
		 " \"tools\": {\"store\": {\"upstream\": \"u\", \"remote\": \"store\","
		 "  \"data_class\": \"public\", \"sink_ceiling\": \"public\", \"response_ceiling\": \"public\"}},"
		 " \"aliases\": {\"save\": \"store\"}, \"initial\": {\"class\": \"public\"}}",
		 image, upstream, work, i, slow ? "slow" : "echo");
	bench_config(c, text);
}

static size_t
running(struct supervisor *s, struct supervisor_snapshot *snap)
{
	size_t i, n = 0;

	supervisor_snapshot(s, snap);
	for (i = 0; i < snap->n; i++)
		n += snap->rows[i].state == SESSION_STATE_RUNNING;
	return n;
}

/* Snapshots at 4 Hz, as the console takes them; the cost of each. */
static void
bench_snapshots(struct supervisor *s, struct supervisor_snapshot *snap, int seconds)
{
	size_t n = (size_t)seconds * 4, i, nc = 0, nu = 0;
	double *changed = calloc(n, sizeof *changed), *same = calloc(n, sizeof *same);
	double *detail = calloc(n, sizeof *detail), *floor_us = calloc(n, sizeof *floor_us);
	struct session_detail *d = malloc(sizeof *d);
	struct session_row *copy = malloc(snap->n * sizeof *copy);
	int64_t t;
	int rc;

	for (i = 0; i < n; i++) {
		t = clock_mono_us();
		rc = supervisor_snapshot(s, snap);
		if (rc == 1)
			changed[nc++] = (double)(clock_mono_us() - t);
		else
			same[nu++] = (double)(clock_mono_us() - t);
		t = clock_mono_us();
		supervisor_detail(s, snap->rows[i % snap->n].id, d);
		detail[i] = (double)(clock_mono_us() - t);
		t = clock_mono_us();
		memcpy(copy, snap->rows, snap->n * sizeof *copy);
		floor_us[i] = (double)(clock_mono_us() - t);
		usleep(250 * 1000);
	}
	printf("snapshots: %zu sessions, %zu bytes a row, 4 Hz for %d s\n", snap->n,
	       sizeof(struct session_row), seconds);
	print_stats("supervisor_snapshot (something changed)", changed, nc, "us");
	print_stats("supervisor_snapshot (only live parts)", same, nu, "us");
	print_stats("supervisor_detail (one session)", detail, n, "us");
	print_stats("floor: memcpy of every row", floor_us, n, "us");
	printf("  events dropped %llu, alerts dropped %llu\n",
	       (unsigned long long)snap->events_dropped, (unsigned long long)snap->alerts_dropped);
	free(changed);
	free(same);
	free(detail);
	free(floor_us);
	free(d);
	free(copy);
}

/* One revoke across all sessions; the time to each acknowledgement. */
static void
bench_revoke(struct supervisor *s, size_t n, const char *slow_id)
{
	struct supervisor_event ev[256];
	double *idle = calloc(n, sizeof *idle), ret, busy = -1;
	size_t acks = 0, ni = 0, k, i;
	int64_t rev, t0;
	struct al_err err;

	t0 = clock_mono_us();
	supervisor_cutover(s, CUTOVER_REVOKE, "store", NULL, 0, &rev, NULL, &err);
	ret = (double)(clock_mono_us() - t0);
	while (acks < n && clock_mono_us() - t0 < 30 * 1000000LL) {
		k = supervisor_events(s, ev, 256);
		for (i = 0; i < k; i++) {
			double ms = (double)(clock_mono_us() - t0) / 1e3;

			if (ev[i].kind != SUPERVISOR_EVENT_CUTOVER_ACK || ev[i].revision != rev)
				continue;
			acks++;
			if (strcmp(ev[i].session, slow_id) == 0)
				busy = ms;
			else
				idle[ni++] = ms;
		}
		if (k == 0)
			usleep(1000);
	}
	printf("revoke across %zu sessions (one with a 10 s call in flight)\n", n);
	printf("  %-44s %9.1f us\n", "supervisor_cutover returned after", ret);
	print_stats("revoke -> ack seen, idle sessions", idle, ni, "ms");
	printf("  %-44s %9.1f ms\n", "revoke -> ack seen, the busy session", busy);
	printf("  acknowledged %zu of %zu\n", acks, n);
	free(idle);
}

int
main(int argc, char **argv)
{
	struct supervisor_snapshot snap = { 0 };
	struct supervisor_options o = { 0 };
	struct airlock_config *cfg;
	struct supervisor *s;
	struct audit *audit;
	struct al_err err;
	char id[SNAP_ID_MAX], slow_id[SNAP_ID_MAX] = "", db[128], sink[160];
	size_t n, i;
	int seconds, waited;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 4) {
		fprintf(stderr, "usage: seam_bench AIRLOCK AGENT_IMAGE UPSTREAM [N] [SECONDS]\n");
		return 2;
	}
	airlock = argv[1];
	image = argv[2];
	upstream = argv[3];
	n = argc > 4 ? (size_t)atoi(argv[4]) : 200;
	seconds = argc > 5 ? atoi(argv[5]) : 10;
	if (n < 1 || n > SUPERVISOR_SESSIONS_MAX || seconds < 1)
		return 2;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (!mkdtemp(work))
		return 1;
	snprintf(db, sizeof db, "%s/audit.db", work);
	o.watchdog_exe = airlock;
	if (audit_open(db, &audit, &err) < 0 || (o.audit = audit, false) ||
	    supervisor_open(&o, &s, NULL, &err) < 0) {
		fprintf(stderr, "bench: %s\n", err.msg);
		return 1;
	}
	cfg = calloc(n, sizeof *cfg);
	for (i = 1; i < n; i++) {
		make_config(&cfg[i], i, false);
		if (supervisor_start(s, &cfg[i], id, &err) < 0)
			fprintf(stderr, "bench: %s\n", err.msg);
	}
	for (waited = 0; waited < 6000 && running(s, &snap) < n - 1; waited++)
		usleep(100 * 1000);
	printf("%zu sessions running after %.1f s\n", running(s, &snap), waited / 10.0);
	/* The last one's upstream holds its first call 10 s from when its sink saw it. */
	make_config(&cfg[0], 0, true);
	if (supervisor_start(s, &cfg[0], slow_id, &err) < 0)
		fprintf(stderr, "bench: %s\n", err.msg);
	snprintf(sink, sizeof sink, "%s/0.sink", work);
	for (waited = 0; waited < 3000 && access(sink, F_OK) != 0; waited++)
		usleep(10 * 1000);
	bench_revoke(s, n, slow_id);
	running(s, &snap);
	bench_snapshots(s, &snap, seconds);
	printf("shutdown: %d containers left\n", supervisor_shutdown(s));
	supervisor_snapshot_free(&snap);
	supervisor_close(s);
	audit_close(audit);
	for (i = 0; i < n; i++)
		config_free(&cfg[i]);
	free(cfg);
	return bench_remove_dir(work);
}
