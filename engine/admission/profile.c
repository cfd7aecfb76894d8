#include "profile.h"
#include "ids.h"
#include "members.h"
#include "seccomp_profile.h"
#include "sealed.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
profile_defaults(struct profile *p)
{
	memset(p, 0, sizeof *p);
	snprintf(p->user, sizeof p->user, "%s", PROFILE_USER_DEFAULT);
	snprintf(p->runtime, sizeof p->runtime, "runc");
	p->ipc = IPC_NONE;
	p->pids_limit = PROFILE_PIDS_RUNC;
	p->memory = PROFILE_MEMORY_DEFAULT;
	p->nano_cpus = PROFILE_NANO_CPUS_DEFAULT;
}

void
profile_free(struct profile *p)
{
	size_t i;

	strv_free(&p->entrypoint);
	strv_free(&p->cmd);
	strv_free(&p->env);
	strv_free(&p->sealed);
	for (i = 0; i < p->n_tmpfs; i++)
		free(p->tmpfs[i].target);
	p->n_tmpfs = 0;
}

static int
strv_copy(struct strv *dst, const struct strv *src)
{
	size_t i;

	for (i = 0; i < src->n; i++)
		if (strv_push(dst, src->v[i]) < 0)
			return -1;
	dst->set = src->set;
	return 0;
}

int
profile_copy(struct profile *dst, const struct profile *src)
{
	size_t i;

	*dst = *src;
	dst->entrypoint = dst->cmd = dst->env = dst->sealed = (struct strv){ 0 };
	dst->n_tmpfs = 0;
	if (strv_copy(&dst->entrypoint, &src->entrypoint) < 0 ||
	    strv_copy(&dst->cmd, &src->cmd) < 0 || strv_copy(&dst->env, &src->env) < 0 ||
	    strv_copy(&dst->sealed, &src->sealed) < 0)
		goto fail;
	for (i = 0; i < src->n_tmpfs; i++) {
		dst->tmpfs[i] = src->tmpfs[i];
		if (!(dst->tmpfs[i].target = strdup(src->tmpfs[i].target)))
			goto fail;
		dst->n_tmpfs = i + 1;
	}
	return 0;
fail:
	profile_free(dst);
	return -1;
}

bool
profile_image_id_valid(const char *s)
{
	size_t i;

	if (!s || strncmp(s, "sha256:", 7) != 0 || strlen(s) != 7 + 64)
		return false;
	for (i = 7; i < 7 + 64; i++)
		if (!isdigit((unsigned char)s[i]) && !(s[i] >= 'a' && s[i] <= 'f'))
			return false;
	return true;
}

static bool
all_digits(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return false;
	for (i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* A decimal id whose value is zero, in any spelling ("0", "00"). */
static bool
is_zero_id(const char *s, size_t n)
{
	return all_digits(s, n) && strspn(s, "0") >= n;
}

bool
profile_user_is_root(const char *user)
{
	const char *colon;
	size_t n;

	if (!user)
		return true;
	while (isspace((unsigned char)*user))
		user++;
	colon = strchr(user, ':');
	n = colon ? (size_t)(colon - user) : strlen(user);
	/* Empty means the image's user, which on scratch is root. */
	if (n == 0)
		return true;
	if (n == 4 && strncasecmp(user, "root", 4) == 0)
		return true;
	if (is_zero_id(user, n))
		return true;
	/* A group of 0 or root hands out root's group permissions. */
	if (colon) {
		const char *g = colon + 1;
		size_t gn = strlen(g);

		if (gn == 0 || is_zero_id(g, gn) || strcasecmp(g, "root") == 0)
			return true;
	}
	return false;
}

/* A decimal uid or gid the kernel can hold: at most PROFILE_ID_MAX. */
static bool
id_in_range(const char *s, size_t n)
{
	unsigned long long v = 0;
	size_t i;

	if (!all_digits(s, n))
		return false;
	for (i = 0; i < n; i++) {
		v = v * 10 + (unsigned long long)(s[i] - '0');
		if (v > PROFILE_ID_MAX)
			return false;
	}
	return true;
}

bool
profile_user_numeric(const char *user)
{
	const char *colon = user ? strchr(user, ':') : NULL;

	if (!colon)
		return false;
	return id_in_range(user, (size_t)(colon - user)) &&
	       id_in_range(colon + 1, strlen(colon + 1));
}

/* Both parts decimal, whatever their value: tells "too large" from "not numeric". */
static bool
user_decimal(const char *user)
{
	const char *colon = strchr(user, ':');

	return colon && all_digits(user, (size_t)(colon - user)) &&
	       all_digits(colon + 1, strlen(colon + 1));
}

static int
apply_string(char *dst, size_t cap, const json_t *v, const char *key,
	     struct al_err *err)
{
	if (!json_is_string(v))
		return al_fail(err, "profile.%s: expected a string", key);
	if (json_string_length(v) >= cap || strlen(json_string_value(v)) != json_string_length(v))
		return al_fail(err, "profile.%s: too long or contains NUL", key);
	memcpy(dst, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static int
apply_argv(struct strv *dst, const json_t *v, const char *key, struct al_err *err)
{
	size_t i;
	json_t *s;

	if (!json_is_array(v) || json_array_size(v) > 64)
		return al_fail(err, "profile.%s: expected an array of at most 64 strings", key);
	strv_free(dst);
	dst->set = true;
	json_array_foreach(v, i, s) {
		if (!json_is_string(s) || strlen(json_string_value(s)) != json_string_length(s))
			return al_fail(err, "profile.%s[%zu]: expected a string without NUL", key, i);
		if (strv_push(dst, json_string_value(s)) < 0)
			return al_fail(err, "profile.%s: out of memory", key);
	}
	return 0;
}

static bool
env_name_valid(const char *name)
{
	size_t i;

	if (!name[0] || isdigit((unsigned char)name[0]) || strlen(name) > 128)
		return false;
	for (i = 0; name[i]; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_')
			return false;
	return true;
}

static int
env_member(void *dst, const char *name, const json_t *val, struct al_err *err)
{
	char *entry;
	int rc;

	if (!env_name_valid(name))
		return al_fail(err, "profile.env.%.64s: not a valid variable name", name);
	if (!json_is_string(val) || strlen(json_string_value(val)) != json_string_length(val))
		return al_fail(err, "profile.env.%s: expected a string without NUL", name);
	if (asprintf(&entry, "%s=%s", name, json_string_value(val)) < 0)
		return al_fail(err, "profile.env: out of memory");
	rc = strv_push(dst, entry);
	free(entry);
	if (rc < 0)
		return al_fail(err, "profile.env: out of memory");
	return 0;
}

static int
apply_env(struct strv *dst, const json_t *v, struct al_err *err)
{
	static const struct members_spec spec = { "profile.env", 64, "names", 0, NULL };

	strv_free(dst);
	dst->set = true;
	return members_each(v, &spec, env_member, dst, err);
}

static int
apply_int(int64_t *dst, const json_t *v, const char *key, int64_t lo, int64_t hi,
	  struct al_err *err)
{
	json_int_t x;

	if (!json_is_integer(v))
		return al_fail(err, "profile.%s: expected an integer", key);
	x = json_integer_value(v);
	if (x < lo || x > hi)
		return al_fail(err, "profile.%s: %lld is outside %lld..%lld", key,
			       (long long)x, (long long)lo, (long long)hi);
	*dst = x;
	return 0;
}

static int
apply_cpus(struct profile *p, const json_t *v, int host_cores, struct al_err *err)
{
	double cpus, max = host_cores > 0 ? host_cores : 1;

	if (!json_is_number(v))
		return al_fail(err, "profile.cpus: expected a number");
	cpus = json_number_value(v);
	if (!(cpus >= 0.01 && cpus <= max))
		return al_fail(err, "profile.cpus: outside 0.01..%g (host cores)", max);
	p->nano_cpus = (int64_t)(cpus * 1e9);
	return 0;
}

/* Why a tmpfs target is refused (fixed text), or NULL when it is allowed. */
static const char *
tmpfs_target_fault(const char *t)
{
	if (t[0] != '/')
		return "must be an absolute path";
	if (strlen(t) >= 128)
		return "is longer than 127 bytes";
	if (strstr(t, "..") || strchr(t, ',') || strchr(t, ':'))
		return "may not hold '..', ',' or ':'";
	if (strcmp(t, "/") == 0)
		return "may not be the root";
	if (strncmp(t, "/proc", 5) == 0 || strncmp(t, "/sys", 4) == 0 || strncmp(t, "/dev", 4) == 0)
		return "may not be under /proc, /sys or /dev";
	return NULL;
}

static int
tmpfs_member(void *ctx, const char *target, const json_t *size, struct al_err *err)
{
	struct profile *p = ctx;
	struct tmpfs_mount *m = &p->tmpfs[p->n_tmpfs];
	const char *fault = tmpfs_target_fault(target);

	if (fault)
		return al_fail(err, "profile.tmpfs: target %.64s is not allowed: it %s", target, fault);
	if (!json_is_integer(size) || json_integer_value(size) < PROFILE_TMPFS_SIZE_MIN ||
	    json_integer_value(size) > PROFILE_TMPFS_SIZE_MAX)
		return al_fail(err, "profile.tmpfs.%s: size outside %lld..%lld bytes", target,
			       (long long)PROFILE_TMPFS_SIZE_MIN, (long long)PROFILE_TMPFS_SIZE_MAX);
	m->target = strdup(target);
	if (!m->target)
		return al_fail(err, "profile.tmpfs: out of memory");
	m->size = json_integer_value(size);
	p->n_tmpfs++;
	return 0;
}

static int
apply_tmpfs(struct profile *p, const json_t *v, struct al_err *err)
{
	static const struct members_spec spec = {
		"profile.tmpfs", PROFILE_TMPFS_MAX, "targets", 0, NULL,
	};
	size_t i;

	for (i = 0; i < p->n_tmpfs; i++)
		free(p->tmpfs[i].target);
	p->n_tmpfs = 0;
	return members_each(v, &spec, tmpfs_member, p, err);
}

static int
apply_ipc(struct profile *p, const json_t *v, struct al_err *err)
{
	const char *s = json_string_value(v);

	if (s && strcmp(s, "none") == 0)
		p->ipc = IPC_NONE;
	else if (s && strcmp(s, "private") == 0)
		p->ipc = IPC_PRIVATE;
	else
		return al_fail(err, "profile.ipc: expected \"none\" or \"private\"");
	return 0;
}

/* Which keys the object sets, for the defaults that follow the runtime. */
struct given {
	bool pids, nproc;
};

static int
apply_runtime(struct profile *p, const json_t *v, struct given given, struct al_err *err)
{
	bool runsc;

	if (apply_string(p->runtime, sizeof p->runtime, v, "runtime", err) < 0)
		return -1;
	if (strcmp(p->runtime, "runc") != 0 && strcmp(p->runtime, "runsc") != 0)
		return al_fail(err, "profile.runtime: expected \"runc\" or \"runsc\"");
	runsc = strcmp(p->runtime, "runsc") == 0;
	if (!given.pids)
		p->pids_limit = runsc ? PROFILE_PIDS_RUNSC : PROFILE_PIDS_RUNC;
	if (!given.nproc)
		p->nproc = runsc ? PROFILE_NPROC_RUNSC : 0;
	return 0;
}

static int
apply_key(struct profile *p, const char *key, const json_t *v, int host_cores,
	  struct given given, struct al_err *err)
{
	if (strcmp(key, "image") == 0)
		return apply_string(p->image, sizeof p->image, v, key, err);
	if (strcmp(key, "user") == 0)
		return apply_string(p->user, sizeof p->user, v, key, err);
	if (strcmp(key, "entrypoint") == 0)
		return apply_argv(&p->entrypoint, v, key, err);
	if (strcmp(key, "cmd") == 0)
		return apply_argv(&p->cmd, v, key, err);
	if (strcmp(key, "env") == 0)
		return apply_env(&p->env, v, err);
	if (strcmp(key, "runtime") == 0)
		return apply_runtime(p, v, given, err);
	if (strcmp(key, "ipc") == 0)
		return apply_ipc(p, v, err);
	if (strcmp(key, "pids_limit") == 0)
		return apply_int(&p->pids_limit, v, key, 1, PROFILE_PIDS_MAX, err);
	if (strcmp(key, "memory") == 0)
		return apply_int(&p->memory, v, key, PROFILE_MEMORY_MIN, PROFILE_MEMORY_MAX, err);
	if (strcmp(key, "cpus") == 0)
		return apply_cpus(p, v, host_cores, err);
	if (strcmp(key, "nofile") == 0)
		return apply_int(&p->nofile, v, key, 16, PROFILE_NOFILE_MAX, err);
	if (strcmp(key, "nproc") == 0)
		return apply_int(&p->nproc, v, key, 1, PROFILE_NPROC_MAX, err);
	if (strcmp(key, "tmpfs") == 0)
		return apply_tmpfs(p, v, err);
	if (strcmp(key, "sealed") == 0)
		return sealed_paths_parse(&p->sealed, v, err);
	return al_fail(err, "profile.%.64s: unknown key", key);
}

int
profile_apply_json(struct profile *p, const json_t *obj, int host_cores,
		   struct al_err *err)
{
	const char *key;
	json_t *v;
	struct given given;

	if (!json_is_object(obj))
		return al_fail(err, "profile: expected an object");
	given.pids = json_object_get(obj, "pids_limit") != NULL;
	given.nproc = json_object_get(obj, "nproc") != NULL;
	json_object_foreach((json_t *)obj, key, v)
		if (apply_key(p, key, v, host_cores, given, err) < 0)
			return -1;
	return profile_validate(p, host_cores, err);
}

/* Why an image reference is not an immutable local image ID. */
static int
image_fault(const char *image, struct al_err *err)
{
	size_t i, n = strlen(image);
	bool upper = false;

	for (i = 7; i < n; i++)
		upper |= image[i] >= 'A' && image[i] <= 'F';
	if (n == 7 + 64 && strncmp(image, "sha256:", 7) == 0 && upper)
		return al_fail(err, "profile.image: write the image ID in lower-case hex"
			       " (sha256:<64 lower-case hex>), as the daemon reports it");
	return al_fail(err, "profile.image: must be an immutable local image ID sha256:<64 hex>,"
		       " never a tag or digest reference");
}

int
profile_validate(const struct profile *p, int host_cores, struct al_err *err)
{
	int64_t max_cpus = (host_cores > 0 ? host_cores : 1) * 1000000000LL;
	bool runsc = strcmp(p->runtime, "runsc") == 0;

	if (p->image[0] && !profile_image_id_valid(p->image))
		return image_fault(p->image, err);
	if (p->entrypoint.set && p->entrypoint.n == 0 && (!p->cmd.set || p->cmd.n == 0))
		return al_fail(err, "profile.entrypoint: an empty list runs nothing unless"
			       " profile.cmd names the program");
	if (profile_user_is_root(p->user))
		return al_fail(err, "profile.user: root in any spelling is refused");
	if (!profile_user_numeric(p->user) && user_decimal(p->user))
		return al_fail(err, "profile.user: uid and gid must be at most %llu",
			       (unsigned long long)PROFILE_ID_MAX);
	if (!profile_user_numeric(p->user))
		return al_fail(err, "profile.user: expected numeric uid:gid");
	if (!runsc && strcmp(p->runtime, "runc") != 0)
		return al_fail(err, "profile.runtime: expected \"runc\" or \"runsc\"");
	if (p->pids_limit < 1 || p->pids_limit > PROFILE_PIDS_MAX)
		return al_fail(err, "profile.pids_limit: outside 1..%d", PROFILE_PIDS_MAX);
	if (runsc && p->pids_limit < PROFILE_PIDS_RUNSC_MIN)
		return al_fail(err, "profile.pids_limit: runsc needs at least %d (its own threads count)",
			       PROFILE_PIDS_RUNSC_MIN);
	if (!runsc && p->nproc != 0)
		return al_fail(err, "profile.nproc: runsc only (under runc pids_limit bounds the agent's processes)");
	if (runsc && (p->nproc < 1 || p->nproc > PROFILE_NPROC_MAX))
		return al_fail(err, "profile.nproc: outside 1..%d", PROFILE_NPROC_MAX);
	if (runsc && p->pids_limit < p->nproc * PROFILE_RUNSC_THREADS_PER_PROC)
		return al_fail(err, "profile.pids_limit: runsc needs at least %d per nproc (gVisor's threads count)",
			       PROFILE_RUNSC_THREADS_PER_PROC);
	if (p->memory < PROFILE_MEMORY_MIN || p->memory > PROFILE_MEMORY_MAX)
		return al_fail(err, "profile.memory: outside the clamp");
	if (p->nano_cpus < 10000000LL || p->nano_cpus > max_cpus)
		return al_fail(err, "profile.cpus: outside 0.01..host cores");
	return 0;
}

static json_t *
strv_json(const struct strv *s)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < s->n; i++)
		if (json_array_append_new(a, json_string(s->v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* One more ulimit, soft and hard alike, when value is set. */
static int
ulimit_add(json_t *u, const char *name, int64_t value)
{
	if (value <= 0)
		return 0;
	return json_array_append_new(u, json_pack("{s:s, s:I, s:I}", "Name", name,
						  "Soft", (json_int_t)value,
						  "Hard", (json_int_t)value));
}

static json_t *
ulimits_json(const struct profile *p)
{
	json_t *u = json_pack("[{s:s, s:i, s:i}]", "Name", "core", "Soft", 0, "Hard", 0);

	if (u && (ulimit_add(u, "nofile", p->nofile) < 0 || ulimit_add(u, "nproc", p->nproc) < 0)) {
		json_decref(u);
		return NULL;
	}
	return u;
}

bool
profile_tmp_guard(const struct profile *p)
{
	size_t i;

	if (strcmp(p->runtime, "runsc") != 0)
		return false;
	for (i = 0; i < p->n_tmpfs; i++)
		if (strcmp(p->tmpfs[i].target, PROFILE_TMP_GUARD_TARGET) == 0)
			return false;
	return true;
}

static json_t *
tmpfs_json(const struct profile *p)
{
	json_t *t = json_object();
	char opts[96];
	size_t i;

	if (t && profile_tmp_guard(p) &&
	    json_object_set_new(t, PROFILE_TMP_GUARD_TARGET, json_string(PROFILE_TMP_GUARD_OPTS)) < 0) {
		json_decref(t);
		return NULL;
	}

	for (i = 0; t && i < p->n_tmpfs; i++) {
		snprintf(opts, sizeof opts, "rw,noexec,nosuid,nodev,size=%lld",
			 (long long)p->tmpfs[i].size);
		if (json_object_set_new(t, p->tmpfs[i].target, json_string(opts)) < 0) {
			json_decref(t);
			return NULL;
		}
	}
	return t;
}

static json_t *
host_config_json(const struct profile *p)
{
	json_t *hc = json_pack(
		"{s:s, s:b, s:b, s:[s], s:[], s:o, s:{s:s, s:{}}, s:{s:s, s:i},"
		" s:o, s:I, s:I, s:I, s:I, s:s, s:b, s:s, s:s, s:b}",
		"NetworkMode", "none",
		"ReadonlyRootfs", 1,
		"Privileged", 0,
		"CapDrop", "ALL",
		"CapAdd",
		"SecurityOpt", seccomp_security_opt(p->runtime),
		"LogConfig", "Type", "none", "Config",
		"RestartPolicy", "Name", "no", "MaximumRetryCount", 0,
		"Ulimits", ulimits_json(p),
		"PidsLimit", (json_int_t)p->pids_limit,
		"Memory", (json_int_t)p->memory,
		"MemorySwap", (json_int_t)p->memory,
		"NanoCpus", (json_int_t)p->nano_cpus,
		"IpcMode", p->ipc == IPC_PRIVATE ? "private" : "none",
		"Init", 1,
		"CgroupnsMode", "private",
		"Runtime", p->runtime,
		"OomKillDisable", 0);

	if (hc && (p->n_tmpfs > 0 || profile_tmp_guard(p)) &&
	    json_object_set_new(hc, "Tmpfs", tmpfs_json(p)) < 0) {
		json_decref(hc);
		return NULL;
	}
	return hc;
}

static json_t *
labels_json(const struct owner_labels *who)
{
	char pid[24], start[24];

	json_t *l;

	snprintf(pid, sizeof pid, "%ld", who->pid);
	snprintf(start, sizeof start, "%llu", who->start_ticks);
	l = json_pack("{s:s, s:s, s:s, s:s, s:s}",
		      LABEL_MANAGED, "1",
		      LABEL_OWNER_PID, pid,
		      LABEL_OWNER_START, start,
		      LABEL_OWNER_BOOT, who->boot_id,
		      LABEL_SESSION, who->session);
	if (l && who->upstream[0] &&
	    json_object_set_new(l, LABEL_UPSTREAM, json_string(who->upstream)) < 0) {
		json_decref(l);
		return NULL;
	}
	return l;
}

json_t *
profile_create_body(const struct profile *p, const struct owner_labels *who)
{
	json_t *body = json_pack(
		"{s:s, s:s, s:o, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:o, s:o}",
		"Image", p->image,
		"User", p->user,
		"Env", strv_json(&p->env),
		/*
		 * No network at all: the daemon leaves the container in a
		 * namespace of its own (a loopback, down) without building a
		 * libnetwork sandbox, and ignores NetworkMode. A second layer
		 * beside NetworkMode none, and about 80 ms less start (the
		 * sandbox's hook re-executes dockerd twice).
		 */
		"NetworkDisabled", 1,
		"Tty", 0,
		"OpenStdin", 1,
		"StdinOnce", 1,
		"AttachStdin", 1,
		"AttachStdout", 1,
		"AttachStderr", 1,
		"Labels", labels_json(who),
		"HostConfig", host_config_json(p));

	if (!body)
		return NULL;
	if ((p->entrypoint.set &&
	     json_object_set_new(body, "Entrypoint", strv_json(&p->entrypoint)) < 0) ||
	    (p->cmd.set && json_object_set_new(body, "Cmd", strv_json(&p->cmd)) < 0)) {
		json_decref(body);
		return NULL;
	}
	return body;
}

int
profile_container_name(char out[PROFILE_NAME_MAX], struct al_err *err)
{
	if (id_random(out, 48, "airlock-", 16) < 0)
		return al_fail(err, "cannot read random bytes for a container name");
	return 0;
}

/* Field 22 of /proc/<pid>/stat: start time in clock ticks since boot. */
static int
read_start_ticks(unsigned long long *ticks)
{
	char buf[1024], *p;
	FILE *f = fopen("/proc/self/stat", "re");
	size_t n;
	int field;

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* the command name may hold spaces */
	if (!p)
		return -1;
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", ticks) != 1)
		return -1;
	return 0;
}

static bool
label_set(const json_t *labels, const char *key)
{
	const char *v = json_string_value(json_object_get(labels, key));

	return v && v[0];
}

bool
profile_labels_managed(const json_t *labels)
{
	const char *managed = json_string_value(json_object_get(labels, LABEL_MANAGED));

	return json_is_object(labels) && managed && strcmp(managed, "1") == 0 &&
	       label_set(labels, LABEL_SESSION) && label_set(labels, LABEL_OWNER_PID) &&
	       label_set(labels, LABEL_OWNER_START) && label_set(labels, LABEL_OWNER_BOOT);
}

int
owner_labels_self(struct owner_labels *who, const char *session, struct al_err *err)
{
	FILE *f;

	memset(who, 0, sizeof *who);
	who->pid = (long)getpid();
	if (read_start_ticks(&who->start_ticks) < 0)
		return al_fail(err, "cannot read this process's start time from /proc");
	f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (!f || !fgets(who->boot_id, sizeof who->boot_id, f)) {
		if (f)
			fclose(f);
		return al_fail(err, "cannot read /proc/sys/kernel/random/boot_id");
	}
	fclose(f);
	who->boot_id[strcspn(who->boot_id, "\n")] = '\0';
	snprintf(who->session, sizeof who->session, "%s", session ? session : "");
	return 0;
}
