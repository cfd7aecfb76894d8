/*
 * What `airlock doctor` says of upstream confinement (issue #41): the
 * kernel's Landlock ABI and seccomp, the default upstream user, a session's
 * parser started and locked down for real, and with a config each upstream
 * prepared exactly as its spawn prepares it (mcp_confine_prepare), so the
 * doctor and the engine cannot disagree.
 */
#include "doctor.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_upstream.h"
#include "mcp_confine.h"
#include "mcp_uids.h"
#include "parser.h"
#include "upstream_catalog.h"

#define ID(c) host_check_id(HOST_CHECK_##c)

/* Without Landlock, only upstreams that opted in can start. */
static void
check_landlock(struct doctor_report *r, const struct airlock_config *c)
{
	int abi = mcp_confine_landlock_abi();
	size_t i, need = 0;
	char want[32];

	snprintf(want, sizeof want, "ABI %d or newer", MCP_LANDLOCK_ABI_MIN);
	for (i = 0; c && i < c->n_upstreams; i++)
		need += !c->upstreams[i].confine.unconfined_ok;
	if (abi >= MCP_LANDLOCK_ABI_MIN)
		check_addf(&r->checks, ID(LANDLOCK), true, want, "ABI %d", abi);
	else if (c && need == 0)
		check_addf(&r->checks, ID(LANDLOCK), true, want, "ABI %d: not enough, but no "
			   "upstream of this config needs it (unconfined_ok)", abi);
	else
		check_addf(&r->checks, ID(LANDLOCK), false, want, "ABI %d: not enough; upstreams "
			   "refuse to start without \"unconfined_ok\": true", abi);
}

/*
 * Only an engine with CAP_SETUID and CAP_SETGID switches users (root, the
 * unit's `airlock`): another keeps its own uid for its upstreams.
 */
static void
check_user(struct doctor_report *r)
{
	unsigned long first, n;
	struct al_err err;
	bool exists = mcp_confine_check_user(MCP_CONFINE_USER, false, &err) == 0;
	bool changes = mcp_confine_can_change_ids();

	if (!exists && !changes)
		check_addf(&r->checks, ID(UPSTREAM_USER), true, MCP_CONFINE_USER,
			   "not needed by this engine (no CAP_SETUID: upstreams keep its uid): %s",
			   err.msg);
	else if (!exists)
		check_addf(&r->checks, ID(UPSTREAM_USER), false, MCP_CONFINE_USER,
			   "%s: run scripts/setup or: useradd --system %s", err.msg, MCP_CONFINE_USER);
	else if (!changes)
		check_add(&r->checks, ID(UPSTREAM_USER), true, MCP_CONFINE_USER, "exists");
	else if (mcp_uids_delegated(&first, &n) < 0)
		check_addf(&r->checks, ID(UPSTREAM_USER), false, MCP_CONFINE_USER,
			   "exists, but no uids are delegated to it for its sessions: run "
			   "scripts/setup or: usermod --add-subuids FIRST-LAST %s", MCP_CONFINE_USER);
	else
		check_addf(&r->checks, ID(UPSTREAM_USER), true, MCP_CONFINE_USER,
			   "exists; its sessions' uids %lu-%lu (/etc/subuid)", first, first + n - 1);
}

/* One upstream: prepared (and freed) as its spawn would, else its plan and the reason. */
static void
check_upstream(struct doctor_report *r, const struct upstream_config *u, struct upstream_view *v)
{
	struct mcp_confine_receipt plan;
	struct mcp_confine *cf = NULL;
	struct al_err err;
	char id[CHECK_ID_MAX];

	snprintf(id, sizeof id, "%s.%.20s", ID(CONFINE), u->name);
	if (mcp_confine_prepare(u->name, &u->confine, &u->argv, &cf, &err) < 0) {
		mcp_confine_plan(&u->confine, &plan);
		mcp_confine_view(u->name, &plan, false, u->user, v);
		check_add(&r->checks, id, false, "confined", err.msg);
		return;
	}
	mcp_confine_view(u->name, mcp_confine_receipt(cf), true, NULL, v);
	mcp_confine_free(cf);
	check_addf(&r->checks, id, true, "confined", "uid %u, landlock ABI %d, network %.64s%s%s",
		   v->uid, (int)v->landlock_abi, v->network, upstream_view_marks(v) ? ", " : "",
		   upstream_view_marks(v) ? upstream_view_marks(v) : "");
}

/* A parser started for real, as a session starts one, and stopped. */
static void
check_parser(struct doctor_report *r, const char *exe)
{
	const struct mcp_confine_receipt *rc;
	char program[4096];
	struct parser *p;
	struct al_err err;

	if (parser_program(exe, program, sizeof program) < 0) {
		check_add(&r->checks, ID(PARSER), false, "locked down", program);
		return;
	}
	if (parser_start(program, 65536, &p, &err) < 0) {
		check_add(&r->checks, ID(PARSER), false, "locked down", err.msg);
		return;
	}
	rc = parser_confinement(p);
	check_addf(&r->checks, ID(PARSER), true, "locked down", "uid %u%s%s%s, %s", (unsigned)rc->uid,
		   rc->user[0] ? " (" : "", rc->user, rc->user[0] ? ")" : "",
		   parser_lockdown_text(p));
	parser_stop(p);
}

void
doctor_confine_host(struct doctor_report *r, const struct airlock_config *c, const char *exe)
{
	bool seccomp = mcp_confine_seccomp_available();

	check_landlock(r, c);
	check_add(&r->checks, ID(UPSTREAM_SECCOMP), seccomp, "available",
		  seccomp ? "available" : "not in this kernel");
	check_user(r);
	check_parser(r, exe);
}

void
doctor_confine_upstreams(struct doctor_report *r, const struct airlock_config *c)
{
	size_t i;

	r->n_upstreams = 0;
	for (i = 0; i < c->n_upstreams && i < SNAP_UPSTREAMS_MAX; i++)
		check_upstream(r, &c->upstreams[i], &r->upstreams[r->n_upstreams++]);
}

/* A catalog entry: NAME.json. */
static int
definition_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 5 && strcmp(d->d_name + n - 5, ".json") == 0;
}

/*
 * A refusal's words for a check's observed text: the path at fault first
 * (no "installed upstream KEY: " before it), the rule's words in
 * parentheses at the end left to the row's help.
 */
static void
fault_words(const char *msg, const char *key, char *out, size_t cap)
{
	char said[UPSTREAM_CATALOG_KEY_MAX + 24];
	const char *at;
	char *rule;

	snprintf(said, sizeof said, "installed upstream %s: ", key);
	at = strstr(msg, said);
	snprintf(out, cap, "%s", at ? at + strlen(said) : msg);
	rule = strrchr(out, '(');
	if (rule && rule > out && rule[-1] == ' ' && out[strlen(out) - 1] == ')')
		rule[-1] = '\0';
}

/* One installed.<key>: loaded as a peer's {"installed": KEY} is, at a start. */
static void
check_installed(struct doctor_report *r, const char *dir, const char *file)
{
	struct upstream_config slot;
	struct upstream_parse p = { .slots = &slot, .upstreams_dir = dir,
				    .installed_only = true, .absolute_only = true };
	struct al_err err = { "" };
	char key[UPSTREAM_CATALOG_KEY_MAX + 2], id[UPSTREAM_CATALOG_KEY_MAX + 16];
	char why[sizeof err.msg];
	json_t *named;
	int rc;

	memset(&slot, 0, sizeof slot);
	snprintf(key, sizeof key, "%.*s", (int)(strlen(file) - 5), file);
	snprintf(id, sizeof id, "%s.%s", ID(INSTALLED), key);
	named = json_pack("{s:s}", "installed", key);
	rc = named ? config_upstream_parse(&p, key, named, &err) : al_fail(&err, "out of memory");
	if (p.n)
		config_upstream_free(&slot);
	json_decref(named);
	if (rc == 0) {	/* the definition's file: an id is cut at CHECK_ID_MAX, the key is not */
		check_addf(&r->checks, id, true, "root's, as what it runs",
			   "%s: root's, as what it runs", file);
		return;
	}
	fault_words(err.msg, key, why, sizeof why);
	check_add(&r->checks, id, false, "root's, as what it runs", why);
}

void
doctor_installed(struct doctor_report *r, const char *dir)
{
	struct dirent **names = NULL;
	int i, n;

	dir = dir ? dir : UPSTREAM_CATALOG_DIR;
	n = scandir(dir, &names, definition_name, alphasort);
	if (n < 0 && errno != ENOENT)
		check_addf(&r->checks, ID(INSTALLED), false, "root's, as what it runs",
			   "%s: cannot be listed: %s", dir, strerror(errno));
	for (i = 0; i < n; i++) {
		check_installed(r, dir, names[i]->d_name);
		free(names[i]);
	}
	free(names);
}
