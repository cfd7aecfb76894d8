#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "cli.h"
#include "config.h"
#include "config_check.h"
#include "ids.h"
#include "otlp.h"
#include "policy.h"
#include "session.h"
#include "thread.h"
#include "warm.h"
#include "weaken.h"

/* Ctrl-C or a TERM asks the session to stop; it still cleans up. */
static atomic_bool stop_requested;

static void
on_stop_signal(int sig)
{
	(void)sig;
	atomic_store(&stop_requested, true);
}

/* "denied by   catalog_drift 3, revoked 1": a misconfigured pin shows here, not only in the audit. */
static void
print_denied_by(const struct gateway_counters *n)
{
	const char *sep = "  denied by   ";
	int r;

	for (r = 0; r < RULE_COUNT; r++)
		if (n->denied_by[r]) {
			printf("%s%s %llu", sep, policy_rule_id((enum policy_rule)r),
			       (unsigned long long)n->denied_by[r]);
			sep = ", ";
		}
	if (n->denied)
		printf("\n");
}

static void
print_text(const struct session_summary *s)
{
	const struct gateway_counters *n = &s->counters;

	/* Why, for the operator (the agent got only the fixed session_end_message). */
	printf("session %s: %s%s%s\n", s->session_id, session_end_id(s->end),
	       s->reason[0] ? ": " : "", s->reason);
	printf("  admission   first %s, second %s%s%s\n", s->admission_first,
	       s->admission_second, s->refused_check[0] ? ", refused by " : "", s->refused_check);
	printf("  calls       %llu (allowed %llu, denied %llu, egress denied %llu)\n",
	       (unsigned long long)n->calls, (unsigned long long)n->allowed,
	       (unsigned long long)n->denied, (unsigned long long)n->egress_denied);
	print_denied_by(n);
	printf("  bytes       stdout %zu, stderr %zu\n", s->stdout_bytes, s->stderr_bytes);
	printf("  container   exit %ld%s, %lld ms\n", s->exit_code,
	       s->oom_killed ? " (OOM killed)" : "", (long long)s->duration_ms);
	printf("  class       %s\n", s->session_class);
	if (s->audit_failures)
		printf("  audit       %u writes refused: the log is incomplete\n", s->audit_failures);
}

static int
open_sinks(const struct cli_opts *o, struct audit **audit, struct otlp **otlp)
{
	char path[4200];
	struct al_err err;

	if (!o->audit && cli_default_audit_path(path, sizeof path) < 0)
		return cli_fail(o->json, "run", "no --audit given and no state directory usable");
	if (audit_open(o->audit ? o->audit : path, audit, &err) < 0)
		return cli_audit_fail(o->json, "run", o->audit ? o->audit : path, true, &err);
	if (o->otlp && otlp_open(o->otlp, otlp, &err) < 0)
		return cli_fail(o->json, "run", "%s", err.msg);
	return 0;
}

/* The config, and the image it names on this daemon: refused before anything starts. */
static int
load_config(const struct cli_opts *o, struct airlock_config *c)
{
	struct al_err err;

	config_init(c);
	if (config_load_file(c, o->config, config_host_cores(), &err) < 0 ||
	    config_check_image_at(getenv("DOCKER_HOST"), &c->profile, &err) == -1)
		return cli_fail(o->json, "run", "%s", err.msg);
	/* One session, then the process exits: no second session to claim a warm one. */
	if (c->pool.size > 0)
		fprintf(stderr, "airlock run: \"pool\" is ignored: a one-shot run starts cold"
			" (the pool is for airlock console and airlock serve)\n");
	return 0;
}

/*
 * Export failures are counted by the exporter; the operator sees the
 * count, once what was queued has gone (or 5 s have).
 */
static void
report_otlp(struct otlp *otlp, json_t *summary)
{
	size_t sent, failed;
	char why[OTLP_FAILURE_MAX];

	otlp_flush(otlp, 5000);
	sent = otlp_sent(otlp);
	failed = otlp_failures(otlp);
	otlp_first_failure(otlp, why);
	if (summary)
		json_object_set_new(summary, "otlp", json_pack("{s:I, s:I, s:s?}",
							       "sent", (json_int_t)sent,
							       "failed", (json_int_t)failed,
							       "first_failure", why[0] ? why : NULL));
	else
		printf("  otlp        %zu spans sent, %zu failed\n", sent, failed);
	if (failed)
		fprintf(stderr, "airlock run: OTLP export: %zu of %zu spans failed; the first: %s\n",
			failed, sent + failed, why);
}

/* The log's head after the session: recorded elsewhere, it anchors a later verify. */
static void
report_head(struct audit *audit, json_t *summary)
{
	char hash[HASH_HEX_LEN + 1];
	int64_t seq;

	if (audit_head(audit, &seq, hash) < 0) {
		fprintf(stderr, "airlock run: the audit log's head cannot be read\n");
		if (summary)
			json_object_set_new(summary, "audit_head", json_null());
		return;
	}
	if (summary)
		json_object_set_new(summary, "audit_head",
				    seq > 0 ? json_pack("{s:I, s:s}", "seq", (json_int_t)seq,
							"hash", hash) : json_null());
	else if (seq > 0)
		printf("  audit       head %lld:%s\n", (long long)seq, hash);
}

static void
print_summary(const struct cli_opts *o, const struct session_summary *sum,
	      struct audit *audit, struct otlp *otlp)
{
	json_t *j;

	if (!o->json) {
		print_text(sum);
		report_head(audit, NULL);
		if (otlp)
			report_otlp(otlp, NULL);
		return;
	}
	j = session_summary_json(sum);
	if (j)
		report_head(audit, j);
	if (j && otlp)
		report_otlp(otlp, j);
	cli_print_json(j);
	json_decref(j);
}

/* ---- a pooled run (mutant pooled_run, engine/admission/weaken.h): one warm container, claimed once ---- */

static struct warm *
run_claim(void *ctx)
{
	struct warm **w = ctx, *out = *w;

	*w = NULL;
	return out;
}

static void
run_discard(void *ctx, struct warm *w)
{
	(void)ctx;
	warm_discard(w);
}

/* A pool of one, warmed now; none (a cold start) when the launch fails. */
static struct session_pool
run_pool(const struct airlock_config *c, struct warm **w)
{
	struct al_err err;
	char label[16];

	*w = NULL;
	if (!weaken_pooled_run())
		return (struct session_pool){ 0 };
	if (id_random(label, sizeof label, "p-", 4) < 0 ||
	    warm_launch(&(struct warm_options){ .profile = &c->profile,
						.docker_host = getenv("DOCKER_HOST"),
						.label = label }, w, &err) < 0)
		fprintf(stderr, "airlock run: pooled_run: no warm container (%s); starting cold\n",
			err.msg);
	return (struct session_pool){ .ctx = w, .claim = run_claim, .discard = run_discard };
}

int
cmd_run(int argc, char **argv)
{
	struct session_summary sum;
	struct airlock_config c;
	struct audit *audit = NULL;
	struct otlp *otlp = NULL;
	struct cli_opts o;
	struct warm *warm = NULL;
	int rc = cli_parse("run", argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (load_config(&o, &c) != 0 || open_sinks(&o, &audit, &otlp) != 0) {
		config_free(&c);
		audit_close(audit);
		return EXIT_ERROR;
	}
	thread_catch_stop(on_stop_signal, 0);
	rc = session_run(&(struct session_options){ .config = &c, .audit = audit, .otlp = otlp,
						    .docker_host = getenv("DOCKER_HOST"),
						    .stop = &stop_requested,
						    .pool = run_pool(&c, &warm) }, &sum);
	warm_discard(warm);	/* not claimed (the session ended first): stopped and removed */
	print_summary(&o, &sum, audit, otlp);
	otlp_close(otlp);
	audit_close(audit);
	config_free(&c);
	/* A session whose log is incomplete did not end well, whatever it did. */
	return rc == 0 && !sum.audit_failures ? EXIT_OK : EXIT_REFUSED;
}
