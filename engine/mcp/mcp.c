#include "mcp.h"
#include "mcp_int.h"
#include "clock.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "airlock-config.h"

#define MCP_MSGS_MAX		65536	/* messages one wait handles: a flood is a fault */
#define MCP_INIT_DEFAULT_MS	10000
#define MCP_CALL_DEFAULT_MS	30000
#define MCP_REPLY_MS		500	/* a refusal or a cancellation sent between calls */

/* The protocol versions whose tools/list and tools/call we understand. */
static const char *const mcp_versions[] = {
	"2025-11-25",
	"2025-06-18",
	"2025-03-26",
	"2024-11-05",
};

/* How long a lost server is given to show its exit status. */
#define MCP_EXIT_LOOK_MS	200

/* --- the exchange ---------------------------------------------------------- */

static bool
span_is(const struct mcp_span *s, const char *text)
{
	return s->p && s->len == strlen(text) && memcmp(s->p, text, s->len) == 0;
}

/*
 * The server asked us something: we offer nothing (no roots, no
 * sampling). The refusal echoes its id as the parser wrote it, an integer
 * or a string; an id of another kind goes unanswered (the server's own
 * timeout deals with it).
 */
static int
mcp_refuse(struct mcp_client *c, const struct mcp_span *id, long long deadline)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
	static const char tail[] = ",\"error\":{\"code\":-32601,\"message\":\"not supported\"}}\n";
	struct hash_canon line;
	int rc = 0;

	c->stats.server_requests++;
	if (!id->p)
		return 0;
	hash_canon_init(&line);
	hash_canon_raw(&line, head, sizeof head - 1);
	hash_canon_raw(&line, id->p, id->len);
	hash_canon_raw(&line, tail, sizeof tail - 1);
	if (!line.bad && mcp_write_all(c, line.buf, line.len, deadline) < 0) {
		mcp_lose(c);
		rc = -1;
	}
	hash_canon_free(&line);
	return rc;
}

/* Anything but the awaited answer. -1: the stream is lost. */
static int
mcp_handle(struct mcp_client *c, const struct mcp_msg *msg, long long deadline)
{
	if (msg->kind != MCP_MSG_REQUEST && msg->kind != MCP_MSG_NOTE)
		return 0;	/* a response nobody waits for: late, after a timeout */
	/* No server asks its client to initialize: this one sends back what it reads. */
	c->echoed |= span_is(&msg->method, "initialize");
	if (msg->kind == MCP_MSG_REQUEST)
		return mcp_refuse(c, &msg->request_id, deadline);
	if (span_is(&msg->method, "notifications/tools/list_changed")) {
		c->stats.list_changed++;
		c->stale = true;
	}
	return 0;
}

/* Read messages until the answer to id arrives, handling the others on the way. */
static enum mcp_wait
mcp_await(struct mcp_client *c, json_int_t id, long long deadline, struct mcp_msg *answer)
{
	size_t i;

	for (i = 0; i < MCP_MSGS_MAX; i++) {
		switch (mcp_read_msg(c, deadline, answer)) {
		case MCP_GOT_NONE:
			return mcp_stopping(c) ? MCP_W_STOPPED : MCP_W_TIMEOUT;
		case MCP_GOT_LOST:
			return MCP_W_LOST;
		case MCP_GOT_BAD:
			c->stats.malformed_lines++;
			return MCP_W_BAD;
		case MCP_GOT_MSG:
			break;
		}
		if (answer->kind == MCP_MSG_ANSWER && answer->id == id)
			return MCP_W_ANSWER;
		if (mcp_handle(c, answer, deadline) < 0)
			return MCP_W_LOST;
		if (mcp_stopping(c))
			return MCP_W_STOPPED;
		if (clock_mono_ms() >= deadline)
			return MCP_W_TIMEOUT;
	}
	return MCP_W_BAD;
}

/* What the server sent between exchanges, without waiting for more. */
void
mcp_drain(struct mcp_client *c)
{
	struct mcp_msg msg;
	size_t i;

	for (i = 0; i < MCP_MSGS_MAX; i++) {
		switch (mcp_read_msg(c, clock_mono_ms(), &msg)) {
		case MCP_GOT_NONE:
		case MCP_GOT_LOST:
			return;
		case MCP_GOT_BAD:
			c->stats.malformed_lines++;
			continue;
		case MCP_GOT_MSG:
			break;
		}
		if (mcp_handle(c, &msg, clock_mono_ms() + MCP_REPLY_MS) < 0)
			return;
	}
}

/* Send a request (params borrowed) and wait for its answer. */
static enum mcp_wait
mcp_exchange(struct mcp_client *c, const char *method, json_t *params,
	     long long deadline, json_int_t *id_out, struct mcp_msg *answer)
{
	json_int_t id = c->next_id++;
	json_t *req;
	int rc;

	if (id_out)
		*id_out = id;
	if (c->broken)
		return MCP_W_LOST;
	req = json_pack("{s:s, s:I, s:s, s:O}", "jsonrpc", "2.0", "id", id,
			"method", method, "params", params);
	if (!req)
		return MCP_W_NOMEM;
	rc = mcp_send(c, req, deadline);
	json_decref(req);
	if (rc == -2)
		return MCP_W_NOMEM;
	if (rc < 0)
		return MCP_W_LOST;
	return mcp_await(c, id, deadline, answer);
}

static int
mcp_notify(struct mcp_client *c, const char *method, json_t *params, long long deadline)
{
	json_t *note = params ?
		json_pack("{s:s, s:s, s:O}", "jsonrpc", "2.0", "method", method, "params", params) :
		json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);
	int rc;

	if (!note)
		return -2;
	rc = mcp_send(c, note, deadline);
	json_decref(note);
	return rc;
}

static int
mcp_wait_fail(struct mcp_client *c, enum mcp_wait w, const char *step, struct al_err *err)
{
	char how[64];

	if (w == MCP_W_NOMEM)
		return al_fail(err, "upstream %s: %s: out of memory", c->name, step);
	if (w == MCP_W_TIMEOUT)
		return al_fail(err, "upstream %s: %s timed out", c->name, step);
	if (w == MCP_W_STOPPED)
		return al_fail(err, "upstream %s: %s given up: the session stops", c->name, step);
	if (w == MCP_W_LOST && !c->replaying && mcp_exited(c, MCP_EXIT_LOOK_MS, how, sizeof how))
		return al_fail(err, "upstream %s: %s before answering %s", c->name, how, step);
	return al_fail(err, "upstream %s: %s failed", c->name, step);
}

int
mcp_result(struct mcp_client *c, const struct mcp_msg *answer, const char *step,
	   struct al_err *err)
{
	unsigned f = answer->flags;

	if ((f & MCP_D_CODE_INT) && !(f & MCP_D_RESULT))
		return al_fail(err, "upstream %s: %s refused (code %lld)", c->name, step,
			       (long long)answer->code);
	if (!(f & MCP_D_RESULT_OBJECT) || (f & MCP_D_ERROR))
		return al_fail(err, "upstream %s: %s failed", c->name, step);
	return 0;
}

/*
 * A request the client makes for itself (initialize, tools/list), named by
 * its method in errors: params are taken (NULL means out of memory).
 */
int
mcp_ask(struct mcp_client *c, const char *method, json_t *params, long long deadline,
	struct mcp_msg *answer, struct al_err *err)
{
	enum mcp_wait w;

	if (!params)
		return al_fail(err, "upstream %s: out of memory", c->name);
	w = mcp_exchange(c, method, params, deadline, NULL, answer);
	json_decref(params);
	if (w != MCP_W_ANSWER)
		return mcp_wait_fail(c, w, method, err);
	return 0;
}

/* --- initialize ------------------------------------------------------------ */

static int
mcp_accept_version(struct mcp_client *c, const struct mcp_msg *answer, struct al_err *err)
{
	size_t i;

	for (i = 0; i < sizeof mcp_versions / sizeof mcp_versions[0]; i++) {
		if (span_is(&answer->version, mcp_versions[i])) {
			memcpy(c->version, mcp_versions[i], strlen(mcp_versions[i]) + 1);
			return 0;
		}
	}
	return al_fail(err, "upstream %s: unsupported protocol version", c->name);
}

/* No client capabilities: declaring roots or sampling changes what servers do. */
static int
mcp_initialize(struct mcp_client *c, long long deadline, struct al_err *err)
{
	struct mcp_msg answer;
	json_t *params;
	int rc = -1;

	params = json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion", MCP_PROTOCOL_VERSION,
			   "capabilities", "clientInfo", "name", "airlock", "version", AIRLOCK_VERSION);
	if (mcp_ask(c, "initialize", params, deadline, &answer, err) < 0)
		return -1;
	if (c->echoed)
		al_fail(err, "upstream %s: not an MCP server: it sent our initialize request back"
			" (an echo, as cat would)", c->name);
	else if (mcp_result(c, &answer, "initialize", err) == 0)
		rc = mcp_accept_version(c, &answer, err);
	if (rc == 0 && mcp_notify(c, "notifications/initialized", NULL, deadline) < 0)
		rc = mcp_wait_fail(c, MCP_W_LOST, "initialize", err);
	return rc;
}

/* --- the public calls ------------------------------------------------------ */

/* Writes to a dead server's stdin must fail with EPIPE, not kill the engine. */
static void
mcp_ignore_sigpipe(void)
{
	struct sigaction old, sa;

	if (sigaction(SIGPIPE, NULL, &old) < 0 || (old.sa_flags & SA_SIGINFO) ||
	    old.sa_handler != SIG_DFL)
		return;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, NULL);
}

static struct mcp_client *
mcp_client_new(const struct mcp_server_config *cfg)
{
	struct mcp_client *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	c->name = strdup(cfg->name ? cfg->name : "?");
	if (!c->name) {
		free(c);
		return NULL;
	}
	c->in_fd = c->out_fd = c->err_fd = -1;
	c->next_id = 1;
	c->digest = cfg->digest;
	c->digest_ctx = cfg->digest_ctx;
	c->stop = cfg->stop;
	c->init_ms = cfg->init_timeout_ms > 0 ? cfg->init_timeout_ms : MCP_INIT_DEFAULT_MS;
	c->call_ms = cfg->call_timeout_ms > 0 ? cfg->call_timeout_ms : MCP_CALL_DEFAULT_MS;
	return c;
}

/* initialize, then the first listing, within one init timeout. */
static int
mcp_begin(struct mcp_client *c, struct al_err *err)
{
	long long deadline = clock_mono_ms() + c->init_ms;

	if (mcp_initialize(c, deadline, err) < 0 || mcp_list_tools(c, deadline, err) < 0)
		return -1;
	return 0;
}

/* The handshake on a client whose transport is up; on failure it is stopped. */
static int
mcp_started(struct mcp_client *c, struct mcp_client **out, struct al_err *err)
{
	if (mcp_begin(c, err) < 0) {
		mcp_stop(c);
		return -1;
	}
	*out = c;
	return 0;
}

int
mcp_start_process(const struct mcp_server_config *cfg, struct mcp_client **out,
		  struct al_err *err)
{
	struct mcp_client *c;

	if (!out || !cfg)
		return al_fail(err, "upstream: bad arguments");
	*out = NULL;
	if (cfg->argv.n == 0 || !cfg->argv.v[0] || cfg->argv.v[0][0] != '/')
		return al_fail(err, "upstream %s: argv[0] must be an absolute path",
			       cfg->name ? cfg->name : "?");
	c = mcp_client_new(cfg);
	if (!c)
		return al_fail(err, "upstream: out of memory");
	mcp_ignore_sigpipe();
	if (mcp_spawn(c, cfg, err) < 0) {
		mcp_stop(c);
		return -1;
	}
	*out = c;
	return 0;
}

void
mcp_process_fds(const struct mcp_client *c, int *in_fd, int *out_fd, int *err_fd)
{
	*in_fd = c->in_fd;
	*out_fd = c->out_fd;
	*err_fd = c->err_fd;
}

int
mcp_start(const struct mcp_server_config *cfg, struct mcp_client **out, struct al_err *err)
{
	struct mcp_client *c;

	if (mcp_start_process(cfg, &c, err) < 0) {
		if (out)
			*out = NULL;
		return -1;
	}
	return mcp_started(c, out, err);
}

static int
mcp_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int
mcp_start_fds(const struct mcp_server_config *cfg, int in_fd, int out_fd, int err_fd,
	      struct mcp_client **out, struct al_err *err)
{
	bool ok = out && cfg && in_fd >= 0 && out_fd >= 0;
	struct mcp_client *c = ok ? mcp_client_new(cfg) : NULL;

	if (out)
		*out = NULL;
	if (!c) {
		mcp_close_fd(&in_fd);
		mcp_close_fd(&out_fd);
		mcp_close_fd(&err_fd);
		return al_fail(err, ok ? "upstream: out of memory" : "upstream: bad arguments");
	}
	c->in_fd = in_fd;
	c->out_fd = out_fd;
	c->err_fd = err_fd;
	mcp_ignore_sigpipe();
	if (mcp_nonblock(in_fd) < 0 || mcp_nonblock(out_fd) < 0 ||
	    (err_fd >= 0 && mcp_nonblock(err_fd) < 0)) {
		al_fail(err, "upstream %s: cannot start", c->name);
		mcp_stop(c);
		return -1;
	}
	return mcp_started(c, out, err);
}

/* stdout comes from the replay (mcp_replay_pump); what we write goes nowhere. */
static int
mcp_replay_open(struct mcp_client *c, const void *bytes, size_t len)
{
	c->replaying = true;
	c->replay = bytes;
	c->replay_len = len;
	c->in_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	return c->in_fd < 0 ? -1 : 0;
}

int
mcp_start_replay(const char *name, const void *bytes, size_t len, struct mcp_client **out,
		 struct al_err *err)
{
	struct mcp_server_config cfg = { .name = name };
	struct mcp_client *c;

	if (!out || (len && !bytes))
		return al_fail(err, "upstream: bad arguments");
	*out = NULL;
	c = mcp_client_new(&cfg);
	if (!c)
		return al_fail(err, "upstream: out of memory");
	if (mcp_replay_open(c, bytes, len) < 0) {
		al_fail(err, "upstream %s: cannot start", c->name);
		mcp_stop(c);
		return -1;
	}
	return mcp_started(c, out, err);
}

void
mcp_stop(struct mcp_client *c)
{
	if (!c)
		return;
	if (c->pid > 0 && !c->reaped)
		mcp_end_process(c);
	mcp_close_fd(&c->in_fd);
	mcp_close_fd(&c->out_fd);
	mcp_close_fd(&c->err_fd);
	mcp_listing_free(&c->tools);
	if (c->dig)
		hash_canon_free(c->dig);
	free(c->dig);
	free(c->buf);
	free(c->name);
	free(c);
}

/* --- tools/call ------------------------------------------------------------ */

/* Exactly one of result and error. Of an error only the code is kept. */
static int
mcp_take_answer(const struct mcp_msg *answer, struct mcp_call_result *res)
{
	unsigned f = answer->flags;

	res->outcome = MCP_FAULT;
	if (!(f & MCP_D_RESULT) == !(f & MCP_D_ERROR))
		return 0;
	if (f & MCP_D_ERROR) {
		if (!(f & MCP_D_CODE_INT) || answer->code < -2147483648LL ||
		    answer->code > 2147483647LL)
			return 0;
		res->outcome = MCP_RPC_ERROR;
		res->error_code = (long)answer->code;
		return 0;
	}
	if (!(f & MCP_D_RESULT_OBJECT))
		return 0;
	if (f & MCP_D_IS_ERROR) {
		res->outcome = MCP_TOOL_ERROR;
		return 0;
	}
	if (!(f & MCP_D_CONTENT))
		return 0;
	/* Text items concatenated in order, no separator; other items only counted. */
	res->text = malloc(answer->text.len + 1);
	if (!res->text)
		return -1;
	memcpy(res->text, answer->text.p, answer->text.len);
	res->text[answer->text.len] = '\0';
	res->text_len = answer->text.len;
	res->other_items = answer->other_items;
	res->outcome = MCP_OK;
	return 0;
}

/* The spec's way to give up on a request; a late answer is dropped by id. */
static void
mcp_cancel(struct mcp_client *c, json_int_t id, const char *reason)
{
	json_t *params = json_pack("{s:I, s:s}", "requestId", id, "reason", reason);

	if (!params)
		return;
	mcp_notify(c, "notifications/cancelled", params, clock_mono_ms() + MCP_REPLY_MS);
	json_decref(params);
}

static int
mcp_call_outcome(struct mcp_client *c, enum mcp_wait w, json_int_t id,
		 const struct mcp_msg *answer, struct mcp_call_result *res, struct al_err *err)
{
	res->outcome = MCP_FAULT;
	switch (w) {
	case MCP_W_NOMEM:
		return al_fail(err, "upstream %s: out of memory", c->name);
	case MCP_W_TIMEOUT:
		mcp_cancel(c, id, "timeout");
		res->outcome = MCP_TIMEOUT;
		break;
	case MCP_W_STOPPED:
		mcp_cancel(c, id, "stopped");
		res->outcome = MCP_STOPPED;
		break;
	case MCP_W_ANSWER:
		if (mcp_take_answer(answer, res) < 0)
			return al_fail(err, "upstream %s: out of memory", c->name);
		break;
	case MCP_W_BAD:
	case MCP_W_LOST:
		break;
	}
	return 0;
}

/*
 * What every tools/call does first; args_ok: the caller's own arguments
 * are sound. 1: go on, before *deadline; 0: done, res says MCP_FAULT (the
 * stream is lost); -1: bad arguments.
 */
static int
mcp_call_begin(struct mcp_client *c, bool args_ok, long timeout_ms,
	       struct mcp_call_result *res, long long *deadline, struct al_err *err)
{
	if (!res)
		return al_fail(err, "upstream: bad call arguments");
	memset(res, 0, sizeof *res);
	if (!c || !args_ok)
		return al_fail(err, "upstream: bad call arguments");
	c->stats.calls++;
	if (c->broken) {
		res->outcome = MCP_FAULT;
		return 0;
	}
	mcp_drain(c);
	*deadline = clock_mono_ms() + (timeout_ms > 0 ? timeout_ms : c->call_ms);
	return 1;
}

int
mcp_call(struct mcp_client *c, const char *tool, const json_t *arguments,
	 long timeout_ms, struct mcp_call_result *res, struct al_err *err)
{
	struct mcp_msg answer;
	json_t *params;
	json_int_t id = 0;
	enum mcp_wait w;
	long long deadline = 0;
	int rc = mcp_call_begin(c, tool && (!arguments || json_is_object(arguments)), timeout_ms,
				res, &deadline, err);

	if (rc <= 0)
		return rc;
	params = json_pack("{s:s, s:o}", "name", tool, "arguments",
			   arguments ? json_deep_copy(arguments) : json_object());
	if (!params)
		return al_fail(err, "upstream %s: out of memory", c->name);
	w = mcp_exchange(c, "tools/call", params, deadline, &id, &answer);
	json_decref(params);
	return mcp_call_outcome(c, w, id, &answer, res, err);
}

/*
 * The tools/call line written once, around the caller's text: no json_t
 * for the arguments, no second serialisation, no printf. The tool name is
 * a string from the operator's config, escaped as jansson escapes it
 * (hash.h); a name that is not valid UTF-8 makes the line bad.
 */
static void
mcp_call_line(struct hash_canon *line, json_int_t id, const char *tool, const char *args,
	      size_t len)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
	static const char method[] = ",\"method\":\"tools/call\",\"params\":{\"name\":";
	static const char arguments[] = ",\"arguments\":";

	hash_canon_raw(line, head, sizeof head - 1);
	hash_canon_int(line, (int64_t)id);
	hash_canon_raw(line, method, sizeof method - 1);
	hash_canon_str(line, tool, strlen(tool));
	hash_canon_raw(line, arguments, sizeof arguments - 1);
	hash_canon_raw(line, args, len);
	hash_canon_raw(line, "}}\n", 3);
}

int
mcp_call_text(struct mcp_client *c, const char *tool, const char *args, size_t len,
	      long timeout_ms, struct mcp_call_result *res, struct al_err *err)
{
	struct mcp_msg answer;
	enum mcp_wait w = MCP_W_LOST;
	long long deadline = 0;
	struct hash_canon line;
	json_int_t id;
	int rc = mcp_call_begin(c, tool && args && len >= 2 && args[0] == '{', timeout_ms, res,
				&deadline, err);

	if (rc <= 0)
		return rc;
	id = c->next_id++;
	hash_canon_init(&line);
	mcp_call_line(&line, id, tool, args, len);
	if (line.bad) {
		hash_canon_free(&line);
		return al_fail(err, "upstream %s: out of memory", c->name);
	}
	if (mcp_write_all(c, line.buf, line.len, deadline) < 0)
		mcp_lose(c);
	else
		w = mcp_await(c, id, deadline, &answer);
	hash_canon_free(&line);
	return mcp_call_outcome(c, w, id, &answer, res, err);
}

void
mcp_call_result_free(struct mcp_call_result *res)
{
	if (!res)
		return;
	free(res->text);
	memset(res, 0, sizeof *res);
}

void
mcp_get_stats(const struct mcp_client *c, struct mcp_stats *out)
{
	if (c)
		*out = c->stats;
	else
		memset(out, 0, sizeof *out);
}

pid_t
mcp_pid(const struct mcp_client *c)
{
	return c ? c->pid : -1;
}

const struct mcp_confine_receipt *
mcp_confinement(const struct mcp_client *c)
{
	return &c->confinement;
}

const char *
mcp_negotiated_version(const struct mcp_client *c)
{
	return c ? c->version : "";
}
