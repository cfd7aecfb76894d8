/*
 * airlock ctl: a running engine's control socket for scripts (the protocol
 * is engine/protocol/control.h). Exit 0 ok, 1 the engine refused (view only, no
 * such session, acks still pending), 2 usage, 3 the engine could not be
 * reached or broke the protocol. --json prints the engine's reply objects,
 * one per line; events are NDJSON.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cmd_ctl_int.h"
#include "canon.h"
#include "clock.h"
#include "config_inline.h"
#include "control_server.h"
#include "frame.h"
#include "grant.h"
#include "incident.h"

/* ---- lines from the engine ---- */

/*
 * The next JSON object from the engine, made printable (canon_printable_load:
 * ctl prints it); NULL at EOF, timeout or garbage.
 */
json_t *
ctl_next_frame(struct ctl *c, int64_t deadline)
{
	const char *line;
	char buf[16384];
	size_t len;
	ssize_t n;

	for (;;) {
		if (linebuf_next(&c->in, &line, &len) == 1)
			return canon_printable_load(line, len);
		if (deadline >= 0 && clock_mono_ms() >= deadline)
			return NULL;
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		int t = deadline < 0 ? -1 : (int)(deadline - clock_mono_ms());

		if (poll(&p, 1, t < 0 && deadline >= 0 ? 0 : t) <= 0)
			continue;
		n = recv(c->fd, buf, sizeof buf, 0);
		if (n <= 0 || linebuf_append(&c->in, buf, (size_t)n) < 0)
			return NULL;
	}
}

/* c->req as the protocol's table writes it (control_request_json), with the next id. */
static int
send_request(struct ctl *c)
{
	size_t n, off = 0;
	json_t *req;
	char *line;
	ssize_t w;

	c->req.id = ++c->next_id;
	req = control_request_json(&c->req);
	line = control_line(req, CONTROL_LINE_MAX + 1, &n);
	json_decref(req);
	while (line && off < n) {
		w = send(c->fd, line + off, n - off, MSG_NOSIGNAL);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	free(line);
	return line && off == n ? 0 : -1;
}

/*
 * The reply to the latest request; pushed frames before it are skipped. A
 * refusal with a null id is the engine saying it could not read a request
 * at all (too long, or its parser gone): with one request in flight, ours.
 */
static json_t *
await_reply(struct ctl *c, int64_t wait_ms)
{
	int64_t deadline = clock_mono_ms() + wait_ms + CTL_TIMEOUT_MS;
	json_t *f, *id;

	while ((f = ctl_next_frame(c, deadline))) {
		id = json_object_get(f, "id");
		if ((json_integer_value(id) == c->next_id && json_object_get(f, "ok")) ||
		    (json_is_null(id) && json_is_false(json_object_get(f, "ok"))))
			return f;
		json_decref(f);
	}
	return NULL;
}

/* ---- one request, and what its reply means ---- */

static int
lost(struct ctl *c)
{
	return cli_fail(false, "ctl", "%s: the engine did not answer", c->verb);
}

/* An ok:false reply: exit 1, its fixed text (and the engine's reason). */
static int
refused(struct ctl *c, json_t *r)
{
	const char *why = json_string_value(json_object_get(r, "reason"));

	if (c->o.json)
		cli_print_json(r);
	fprintf(stderr, "airlock ctl: %s: %s%s%s\n", c->verb,
		json_string_value(json_object_get(r, "error")) ?: "refused", why ? ": " : "",
		why ? why : "");
	json_decref(r);
	return EXIT_REFUSED;
}

/* A value the engine would refuse: refused here, as it would be there. */
static int
bad_argument(struct ctl *c)
{
	fprintf(stderr, "airlock ctl: %s: %s\n", c->verb, CONTROL_E_ARG);
	return EXIT_REFUSED;
}

/* Send c->req and wait: *out is an ok reply, else the exit status is returned. */
int
ctl_call(struct ctl *c, int64_t wait_ms, json_t **out)
{
	json_t *r;

	*out = NULL;
	if (send_request(c) < 0)
		return lost(c);
	r = await_reply(c, wait_ms);
	if (!r)
		return lost(c);
	if (!json_is_true(json_object_get(r, "ok")))
		return refused(c, r);
	*out = r;
	return -1;
}

/* c->req, made afresh for op; its keys are set with control_request_*. */
struct control_request *
ctl_request(struct ctl *c, enum control_op op)
{
	control_request_init(&c->req, op);
	return &c->req;
}

/* The op the verb names (revoke, restore, freeze, thaw). */
struct control_request *
ctl_verb_request(struct ctl *c)
{
	enum control_op op = CONTROL_OP_COUNT;

	control_op_by_name(c->verb, &op);
	return ctl_request(c, op);
}

/* ---- the commands ---- */

const char *
ctl_str_of(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

long long
ctl_int_of(const json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

/* Print an ok reply as JSON, or one line of text. */
int
ctl_done(struct ctl *c, json_t *r, const char *fmt, const char *word)
{
	int rc = EXIT_OK;

	if (c->o.json)
		rc = cli_print_json(r);
	else
		printf(fmt, word);
	json_decref(r);
	return rc;
}

/* An answer of a change that cannot be read: said so, r freed; NULL. */
static void *
unreadable(struct ctl *c, json_t *r, void *a)
{
	free(a);
	json_decref(r);
	cli_fail(c->o.json, "ctl", "%s: the engine's answer cannot be read", c->verb);
	return NULL;
}

/* The answer r of op (control.h's control_done), or NULL (unreadable). */
static struct control_done *
done_of(struct ctl *c, json_t *r, enum control_op op)
{
	struct control_done *d = calloc(1, sizeof *d);

	return d && control_done_from_json(op, r, d) == 0 ? d : unreadable(c, r, d);
}

/* A cutover's answer r (control.h's control_cutover), or NULL (unreadable). */
static struct control_cutover *
cutover_of(struct ctl *c, json_t *r)
{
	struct control_cutover *a = calloc(1, sizeof *a);

	return a && control_cutover_from_json(r, a) == 0 ? a : unreadable(c, r, a);
}

/* A start's or a stop's answer: the session it acted on, said by fmt. */
static int
session_done(struct ctl *c, json_t *r, enum control_op op, const char *fmt)
{
	struct control_done *d = done_of(c, r, op);
	int rc;

	if (!d)
		return EXIT_ERROR;
	rc = ctl_done(c, r, fmt, d->session);
	free(d);
	return rc;
}

/*
 * The config is read here, with the caller's rights, and sent whole: the
 * engine opens no file for a peer (config_inline.h); so is its initial
 * payload when the caller is not root. One the caller cannot read, or too
 * large for a request line, is refused here.
 */
static int
do_start(struct ctl *c)
{
	struct al_err err;
	json_t *cfg = config_inline_file(c->arg, &err), *r;
	char *line;
	int rc;

	if (!cfg) {	/* refused here: exit 1, as the engine's refusal of a config */
		cli_fail(c->o.json, "ctl", "start: %s", err.msg);
		return EXIT_REFUSED;
	}
	line = json_dumps(cfg, JSON_COMPACT);
	rc = line && strlen(line) + 64 <= CONTROL_LINE_MAX;
	free(line);
	if (!rc) {
		cli_fail(c->o.json, "ctl", "start: config %s: larger than a request line (%d bytes)%s",
			 c->arg, CONTROL_LINE_MAX,
			 json_object_get(json_object_get(cfg, "initial"), "payload") ?
			 " with the initial payload ctl read for you (a larger one: root's "
			 "serve --config, whose engine reads up to 1 MiB)" : "");
		json_decref(cfg);
		return EXIT_REFUSED;
	}
	control_request_config(ctl_request(c, CONTROL_OP_START), cfg);
	rc = ctl_call(c, 0, &r);
	control_request_free(&c->req);
	if (rc >= 0)
		return rc;
	return session_done(c, r, CONTROL_OP_START, "%s\n");
}

static int
do_stop(struct ctl *c)
{
	json_t *r;
	int rc;

	if (control_request_str(ctl_request(c, CONTROL_OP_STOP), CONTROL_K_SESSION, c->arg) < 0)
		return bad_argument(c);
	rc = ctl_call(c, 0, &r);	/* the engine names the session the id or prefix picked */
	return rc >= 0 ? rc : session_done(c, r, CONTROL_OP_STOP, "stopping %s\n");
}

static int
do_stop_all(struct ctl *c)
{
	json_t *r;
	char n[32];
	struct control_done *d;
	int rc = (ctl_request(c, CONTROL_OP_STOP_ALL), ctl_call(c, 0, &r));

	if (rc >= 0)
		return rc;
	if (!(d = done_of(c, r, CONTROL_OP_STOP_ALL)))
		return EXIT_ERROR;
	snprintf(n, sizeof n, "%zu session%s", d->stopped, d->stopped == 1 ? "" : "s");
	free(d);
	return ctl_done(c, r, "stopping %s\n", n);
}

/* tool, and --all or each --session: 0, or -1 when a value would not fit. */
static int
cutover_request(struct ctl *c, int64_t wait)
{
	struct control_request *req = ctl_verb_request(c);
	size_t i;

	control_request_int(req, CONTROL_K_WAIT, wait);
	if (c->for_s)
		control_request_int(req, CONTROL_K_FOR, c->for_s);
	if (c->calls)
		control_request_int(req, CONTROL_K_CALLS, c->calls);
	if (c->o.n[OPT_FLOW] ? control_request_str(req, CONTROL_K_FLOW,
						    c->o.values[OPT_FLOW][0]) < 0
			     : control_request_str(req, CONTROL_K_TOOL, c->arg) < 0)
		return -1;
	if (c->o.n[OPT_ALL])
		control_request_bool(req, CONTROL_K_ALL, true);
	else
		req->has |= CONTROL_KEY(SESSIONS);	/* named, even when none is */
	for (i = 0; !c->o.n[OPT_ALL] && i < c->o.n[OPT_SESSION]; i++)
		if (control_request_add_id(req, c->o.values[OPT_SESSION][i]) < 0)
			return -1;
	return 0;
}

static void
print_names(const char *what, char (*ids)[SNAP_ID_MAX], size_t n)
{
	size_t i;

	if (n == 0)
		return;
	fprintf(stderr, "airlock ctl: %s:", what);
	for (i = 0; i < n; i++)
		fprintf(stderr, " %s", ids[i]);
	fputc('\n', stderr);
}

/* *wait: --wait MS, or the default; a usage error when it is not milliseconds in range. */
static int
wait_of(struct ctl *c, long *wait)
{
	const char *w = c->o.n[OPT_WAIT] ? c->o.values[OPT_WAIT][0] : NULL;

	*wait = w ? strtol(w, NULL, 10) : CTL_WAIT_MS;
	if (w && (strspn(w, "0123456789") != strlen(w) || !*w || *wait > CONTROL_WAIT_MAX_MS))
		return cli_usage_error("ctl", "--wait wants milliseconds, 0 to %d",
				       CONTROL_WAIT_MAX_MS);
	return -1;
}

/* What a cutover acted on, as the operator named it: "remember (create_entities)" for an alias. */
static void
print_acted(const char *what, const char *tool)
{
	if (what)
		printf(" %s", what);
	if (what && tool[0] && strcmp(what, tool) != 0)
		printf(" (%s)", tool);
}

/*
 * Send the cutover request built, then print its reply: its acks, and the
 * sessions that ended or still wait (exit 1).
 */
static int
cutover_call(struct ctl *c, long wait, const char *what)
{
	struct control_cutover *a;
	json_t *r;
	size_t i, na = 0;
	int rc = ctl_call(c, wait, &r);

	if (rc >= 0)
		return rc;
	if (!(a = cutover_of(c, r)))
		return EXIT_ERROR;
	rc = a->n_pending > 0 && wait > 0 ? EXIT_REFUSED : EXIT_OK;
	if (c->o.json)
		cli_print_json(r);
	else {
		printf("%s", c->verb);
		print_acted(what, a->tool);
		printf(": revision %lld, %zu of %zu sessions acknowledged\n",
		       (long long)a->revision, a->n_acks, a->targets);
		for (i = 0; i < a->n_acks; i++) {
			printf("  %-24s %s (waited %lld us)\n", a->acks[i].session,
			       cutover_result_id(a->acks[i].result), (long long)a->acks[i].waited_us);
			na += a->acks[i].result == CUTOVER_NOT_APPLICABLE;
		}
		if (na && c->o.n[OPT_FLOW] && strcmp(c->verb, "hold") == 0)
			printf("  not applicable: no declassification (a flow its sink ceiling "
			       "denies, without\n  policy.declassify_by_hold in the session's "
			       "config; or no such class there)\n");
	}
	print_names("ended before acknowledging", a->ended, a->n_ended);
	if (a->unsaved) {	/* acted on, but the next engine would not know it */
		fprintf(stderr, "airlock ctl: %s: not saved: the audit log refused the entry of what "
			"stands on every session; an engine restart would not keep it until the engine, "
			"trying every 2 s, gets it in\n", c->verb);
		rc = EXIT_REFUSED;
	}
	/* --wait 0 asked for no wait: exit 0, and whom it did not wait for. */
	print_names(wait > 0 ? "still pending" : "not waited for (--wait 0)", a->pending,
		    a->n_pending);
	json_decref(r);
	free(a);
	return rc;
}

static int
do_cutover(struct ctl *c)
{
	long wait;
	int rc;

	if ((rc = wait_of(c, &wait)) >= 0)
		return rc;
	if (cutover_request(c, wait) < 0)
		return bad_argument(c);
	return cutover_call(c, wait, c->o.n[OPT_FLOW] ? c->o.values[OPT_FLOW][0] : c->arg);
}

/*
 * An incident policy (engine/config/incident.h), as the console's :apply: each of
 * its cutovers on every live session, in the file's order, each waited for
 * like a revoke --all. Exit 1 when any was refused or left sessions pending.
 */
static int
do_apply(struct ctl *c)
{
	const char *verb = c->verb;
	long wait;
	struct incident p;
	struct al_err err;
	int status = EXIT_OK, rc = wait_of(c, &wait);
	size_t i;

	if (rc >= 0)
		return rc;
	if (access(c->arg, R_OK) < 0 && errno == EACCES) {	/* as start's: refused here */
		cli_fail(c->o.json, "ctl", "apply: %s: %s", c->arg, CONFIG_INLINE_UNREADABLE);
		return EXIT_REFUSED;
	}
	if (incident_load(c->arg, &p, &err) < 0) {	/* refused here, as a start's config */
		cli_fail(c->o.json, "ctl", "apply %s: %s", c->arg, err.msg);
		return EXIT_REFUSED;
	}
	for (i = 0; i < p.n; i++) {
		c->verb = cutover_op_id(p.op[i]);
		control_request_bool(ctl_verb_request(c), CONTROL_K_ALL, true);
		control_request_int(&c->req, CONTROL_K_WAIT, wait);
		rc = control_request_str(&c->req, CONTROL_K_TOOL, p.tool[i]) < 0 ? bad_argument(c)
			: cutover_call(c, wait, p.tool[i]);
		if (rc == EXIT_ERROR) {
			c->verb = verb;
			return rc;	/* the engine is gone: the rest cannot go */
		}
		if (rc != EXIT_OK)
			status = EXIT_REFUSED;
	}
	c->verb = verb;
	return status;
}

/* The kill switch: freeze or thaw every session, acknowledged like a cutover. */
static int
do_freeze(struct ctl *c)
{
	long wait;
	int rc = wait_of(c, &wait);

	if (rc >= 0)
		return rc;
	control_request_int(ctl_verb_request(c), CONTROL_K_WAIT, wait);
	return cutover_call(c, wait, NULL);
}

/* ID, --all, or --called TOOL [--within D]: exactly one; refused before the socket. */
static int
quarantine_terms(struct ctl *c)
{
	const char *called = c->o.n[OPT_CALLED] ? c->o.values[OPT_CALLED][0] : NULL;
	const char *within = c->o.n[OPT_WITHIN] ? c->o.values[OPT_WITHIN][0] : NULL;
	bool quarantine = strcmp(c->verb, "quarantine") == 0;
	int picks = (c->arg != NULL) + (c->o.n[OPT_ALL] > 0) + (called != NULL);

	if ((called || within) && !quarantine)
		return cli_usage_error("ctl", "--called and --within are quarantine's only");
	if (!quarantine && strcmp(c->verb, "release") != 0)
		return -1;
	if (picks != 1 || c->o.n[OPT_SESSION])
		return cli_usage_error("ctl", "%s wants %s (one of them)", c->verb,
				       quarantine ? "ID, --all or --called TOOL" : "ID or --all");
	if (within && !called)
		return cli_usage_error("ctl", "--within goes with --called");
	if (within && grant_duration_parse(within, &c->within_s) < 0)
		return cli_usage_error("ctl", "--within wants 90s, 15m or 2h: %d s to %d h",
				       GRANT_FOR_MIN_S, GRANT_FOR_MAX_S / 3600);
	return -1;
}

/* The sessions held or released, one a line (none: said so). */
static int
quarantine_done(struct ctl *c, json_t *r)
{
	bool on = strcmp(c->verb, "quarantine") == 0;
	struct control_done *d;
	size_t i;

	if (!(d = done_of(c, r, on ? CONTROL_OP_QUARANTINE : CONTROL_OP_RELEASE)))
		return EXIT_ERROR;
	if (c->o.json) {
		free(d);
		return ctl_done(c, r, "%s", "");
	}
	if (d->n_ids == 0)
		printf("%s: no session changed\n", c->verb);
	for (i = 0; i < d->n_ids; i++)
		printf("%s %s\n", on ? "quarantined" : "released", d->ids[i]);
	free(d);
	json_decref(r);
	return EXIT_OK;
}

/* Quarantine or release: one session, every live one, or those that called a tool. */
static int
do_quarantine(struct ctl *c)
{
	struct control_request *q = ctl_verb_request(c);
	json_t *r;
	int rc;

	if (c->arg && control_request_add_id(q, c->arg) < 0)
		return bad_argument(c);
	if (c->o.n[OPT_ALL])
		control_request_bool(q, CONTROL_K_ALL, true);
	if (c->o.n[OPT_CALLED] &&
	    control_request_str(q, CONTROL_K_TOOL, c->o.values[OPT_CALLED][0]) < 0)
		return bad_argument(c);
	if (c->within_s)
		control_request_int(q, CONTROL_K_WITHIN, c->within_s);
	rc = ctl_call(c, 0, &r);
	return rc >= 0 ? rc : quarantine_done(c, r);
}

static int
do_metrics(struct ctl *c)
{
	json_t *r;
	int rc = (ctl_request(c, CONTROL_OP_METRICS), ctl_call(c, 0, &r));

	if (rc >= 0)
		return rc;
	return ctl_done(c, r, "%s", ctl_str_of(r, "text"));
}

/* ---- --stdio: bytes both ways until the engine closes ---- */

static int
copy_once(int from, int to)
{
	char buf[65536];
	ssize_t n = read(from, buf, sizeof buf), off = 0, w;

	if (n <= 0)
		return -1;
	while (off < n) {
		w = write(to, buf + off, (size_t)(n - off));
		if (w <= 0)
			return -2;
		off += w;
	}
	return 0;
}

static int
stdio_copy(int fd)
{
	struct pollfd p[2] = { { .fd = STDIN_FILENO, .events = POLLIN },
			       { .fd = fd, .events = POLLIN } };

	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return EXIT_ERROR;
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR))
			if (copy_once(fd, STDOUT_FILENO) < 0)
				return EXIT_OK;
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR) && copy_once(STDIN_FILENO, fd) < 0) {
			shutdown(fd, SHUT_WR);	/* the engine answers what it got, then closes */
			p[0].fd = -1;
		}
	}
}

/* ---- connecting ---- */

static int
connect_engine(struct ctl *c)
{
	char path[PATH_MAX];
	struct al_err err;

	if (c->o.n[OPT_SOCKET])
		snprintf(path, sizeof path, "%s", c->o.values[OPT_SOCKET][0]);
	else
		control_socket_dial(path, sizeof path);
	c->fd = control_connect(path, &err);
	if (c->fd < 0)
		return cli_fail(c->o.json, "ctl", "%s", err.msg);
	return 0;
}

/* The engine's first frame: a hello, or the reason it will not talk to us. */
static int
read_hello(struct ctl *c)
{
	c->hello = ctl_next_frame(c, clock_mono_ms() + CTL_TIMEOUT_MS);
	if (!c->hello)
		return lost(c);
	if (json_integer_value(json_object_get(c->hello, "airlock")) != CONTROL_VERSION)
		return cli_fail(c->o.json, "ctl", "the engine speaks another protocol");
	if (json_is_false(json_object_get(c->hello, "ok"))) {
		if (c->o.json)
			cli_print_json(c->hello);
		fprintf(stderr, "airlock ctl: the engine refused this connection: %s\n",
			ctl_str_of(c->hello, "error"));
		return EXIT_REFUSED;
	}
	return 0;
}


/* What runs each of ctl's verbs (their names and help: commands.c). */
static const struct {
	const char *verb;
	int (*run)(struct ctl *c);
} verbs[] = {
	{ "status", ctl_status },
	{ "sessions", ctl_sessions },
	{ "tools", ctl_sessions },
	{ "start", do_start },
	{ "stop", do_stop },
	{ "revoke", do_cutover },
	{ "restore", do_cutover },
	{ "hold", do_cutover },
	{ "pending", ctl_pending },
	{ "approve", ctl_decide },
	{ "deny", ctl_decide },
	{ "apply", do_apply },
	{ "stop-all", do_stop_all },
	{ "freeze", do_freeze },
	{ "thaw", do_freeze },
	{ "quarantine", do_quarantine },
	{ "release", do_quarantine },
	{ "events", ctl_events },
	{ "audit", ctl_audit },
	{ "timeline", ctl_timeline },
	{ "metrics", do_metrics },
	{ "host", ctl_host },
};

static int
dispatch(struct ctl *c)
{
	size_t i;

	for (i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		if (strcmp(c->verb, verbs[i].verb) == 0)
			return verbs[i].run(c);
	return cli_fail(c->o.json, "ctl", "%s: not runnable here", c->verb);
}

static int
ctl_run(struct ctl *c)
{
	int rc;

	if (c->o.n[OPT_STDIO])
		return connect_engine(c) != 0 ? EXIT_ERROR : stdio_copy(c->fd);
	if (linebuf_init(&c->in, CONTROL_FRAME_MAX, 2 * (size_t)CONTROL_FRAME_MAX) < 0)
		return cli_fail(c->o.json, "ctl", "out of memory");
	if (connect_engine(c) != 0)
		return EXIT_ERROR;
	rc = read_hello(c);
	return rc != 0 ? rc : dispatch(c);
}

/* restore's --for and --calls, read before the socket: -1, or a usage error's status. */
static int
grant_terms(struct ctl *c)
{
	const char *f = c->o.n[OPT_FOR] ? c->o.values[OPT_FOR][0] : NULL;
	const char *n = c->o.n[OPT_CALLS] ? c->o.values[OPT_CALLS][0] : NULL;

	if ((f || n) && strcmp(c->verb, "restore") != 0)
		return cli_usage_error("ctl", "--for and --calls are restore's only (a grant)");
	if (c->o.n[OPT_REST] && strcmp(c->verb, "approve") != 0)
		return cli_usage_error("ctl", "--rest is approve's only");
	if (f && grant_duration_parse(f, &c->for_s) < 0)
		return cli_usage_error("ctl", "--for wants 90s, 15m or 2h: %d s to %d h",
				       GRANT_FOR_MIN_S, GRANT_FOR_MAX_S / 3600);
	if (n && grant_calls_parse(n, &c->calls) < 0)
		return cli_usage_error("ctl", "--calls wants a number from 1 to %d", GRANT_CALLS_MAX);
	return -1;
}

/*
 * The options each verb takes beyond --socket, --json and --stdio (the
 * verbs not listed take none): another is a usage error before the socket,
 * not an option silently ignored. The verbs' own checks say more first.
 */
static const struct cli_verb_options verb_options[] = {
	{ "revoke", { OPT_SESSION, OPT_ALL, OPT_WAIT } },
	{ "restore", { OPT_SESSION, OPT_ALL, OPT_WAIT, OPT_FOR, OPT_CALLS, OPT_FLOW } },
	{ "hold", { OPT_SESSION, OPT_ALL, OPT_WAIT, OPT_FLOW } },
	{ "pending", { OPT_FOLLOW } },
	{ "approve", { OPT_REST } },
	{ "apply", { OPT_WAIT } },
	{ "freeze", { OPT_WAIT } },
	{ "thaw", { OPT_WAIT } },
	{ "quarantine", { OPT_ALL, OPT_CALLED, OPT_WITHIN } },
	{ "release", { OPT_ALL } },
	{ "events", { OPT_FOLLOW } },
	{ "audit", { OPT_FOLLOW } },
	{ "timeline", { OPT_FOLLOW, OPT_SINCE } },
};

/* revoke, restore, hold: on --all or on each --session ID, one of them; before the socket. */
static int
cutover_terms(struct ctl *c)
{
	if (strcmp(c->verb, "revoke") != 0 && strcmp(c->verb, "restore") != 0 &&
	    strcmp(c->verb, "hold") != 0)
		return -1;
	if (!c->o.n[OPT_ALL] && !c->o.n[OPT_SESSION])
		return cli_usage_error("ctl", "%s wants --all or --session ID", c->verb);
	if (c->o.n[OPT_ALL] && c->o.n[OPT_SESSION])
		return cli_usage_error("ctl", "%s wants --all or --session ID, not both", c->verb);
	return -1;
}

/* --since, read before the socket: -1, or a usage error's status. */
static int
since_terms(struct ctl *c)
{
	if (!c->o.n[OPT_SINCE])
		return -1;
	if (strcmp(c->verb, "timeline") != 0)
		return cli_usage_error("ctl", "--since is timeline's only");
	if (cli_parse_since(c->o.values[OPT_SINCE][0], c->since) < 0)
		return cli_usage_error("ctl", "%s", CLI_SINCE_USAGE);
	return -1;
}

/* hold or restore with --flow: the flow takes TOOL's place. */
static bool
flow_verb(const struct ctl *c)
{
	return c->o.n[OPT_FLOW] && (strcmp(c->verb, "hold") == 0 || strcmp(c->verb, "restore") == 0);
}

/* --flow, read before the socket: -1, or a usage error's status. */
static int
flow_terms(struct ctl *c)
{
	if (!c->o.n[OPT_FLOW])
		return -1;
	if (!flow_verb(c))
		return cli_usage_error("ctl", "--flow is hold's and restore's only");
	if (c->arg)
		return cli_usage_error("ctl", "%s wants TOOL or --flow CLASS>SINK (not both)", c->verb);
	if (c->for_s || c->calls)
		return cli_usage_error("ctl", "--for and --calls grant a tool, not a class flow");
	if (!strchr(c->o.values[OPT_FLOW][0], '>'))	/* the shell took '>' for a redirection */
		return cli_usage_error("ctl", "--flow wants CLASS>SINK, quoted for the shell "
				       "('confidential>public'), not '%.64s'", c->o.values[OPT_FLOW][0]);
	return -1;
}

int
cmd_ctl(int argc, char **argv)
{
	struct ctl c = { .fd = -1 };
	int rc = cli_parse("ctl", argc, argv, &c.o);

	if (rc >= 0)
		return rc;
	if (!c.o.n[OPT_STDIO] && c.o.n_positional == 0)
		return cli_usage_error("ctl", "a command is required");
	if (c.o.n[OPT_STDIO] && c.o.n_positional > 0)
		return cli_usage_error("ctl", "--stdio takes no command");
	c.verb = c.o.n_positional ? c.o.positional[0] : "stdio";
	c.arg = c.o.n_positional > 1 ? c.o.positional[1] : NULL;
	if (!c.o.n[OPT_STDIO] && (rc = cli_check_verb("ctl", c.verb, c.arg != NULL ||
						       flow_verb(&c))) >= 0)
		return rc;	/* before the socket: a typo is not an unreachable engine */
	if ((rc = grant_terms(&c)) >= 0 || (rc = quarantine_terms(&c)) >= 0 ||
	    (rc = flow_terms(&c)) >= 0 || (rc = since_terms(&c)) >= 0 ||
	    (rc = cutover_terms(&c)) >= 0 ||
	    (rc = cli_verb_options_check("ctl", verb_options, sizeof verb_options /
					 sizeof verb_options[0], c.verb, &c.o)) >= 0)
		return rc;
	rc = ctl_run(&c);
	if (c.fd >= 0)
		close(c.fd);
	linebuf_free(&c.in);
	json_decref(c.hello);
	return rc;
}
