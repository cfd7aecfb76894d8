#include "preflight.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#define ID(c) host_check_id(HOST_CHECK_##c)

bool
preflight_core_pattern_ok(const char *pattern)
{
	const char *s = pattern;

	if (!s)
		return false;
	while (*s && isspace((unsigned char)*s))
		s++;
	return *s != '\0' && *s != '|';
}

int
preflight_endpoint(const char *docker_host, char *path, size_t cap,
		   struct al_err *err)
{
	const char *p;

	if (!docker_host || !docker_host[0])
		p = "/var/run/docker.sock";
	else if (strncmp(docker_host, "unix://", 7) == 0)
		p = docker_host + 7;
	else
		return al_fail(err, "DOCKER_HOST %.32s%s is not a local unix socket; "
			       "only unix:// endpoints are supported (a remote or VM-backed "
			       "daemon cannot be checked)",
			       docker_host, strlen(docker_host) > 32 ? "…" : "");
	if (p[0] != '/')
		return al_fail(err, "DOCKER_HOST unix socket path must be absolute");
	if (strlen(p) >= cap)
		return al_fail(err, "DOCKER_HOST unix socket path is too long");
	memcpy(path, p, strlen(p) + 1);
	return 0;
}

struct docker *
preflight_connect(const char *docker_host, struct al_err *err)
{
	char sock[DOCKER_SOCKET_MAX];

	if (preflight_endpoint(docker_host, sock, sizeof sock, err) < 0)
		return NULL;
	return docker_open(sock, DOCKER_TIMEOUT_MS, err);
}

static void
printable(char *dst, size_t cap, const char *src)
{
	size_t i;

	for (i = 0; src[i] && i + 1 < cap; i++)
		dst[i] = isprint((unsigned char)src[i]) ? src[i] : '?';
	dst[i] = '\0';
}

void
preflight_local_facts(const char *sysname, const char *core_pattern,
		      struct check_list *out)
{
	char shown[CHECK_VALUE_MAX];

	check_add(out, ID(OS), sysname && strcmp(sysname, "Linux") == 0, "Linux",
		  sysname ? sysname : "unknown");
	if (!core_pattern) {
		check_add(out, ID(CORE_PATTERN), false, "non-blank, not a |pipe",
			  "unreadable");
		return;
	}
	printable(shown, sizeof shown, core_pattern);
	check_add(out, ID(CORE_PATTERN), preflight_core_pattern_ok(core_pattern),
		  "non-blank, not a |pipe", shown[0] ? shown : "(blank)");
}

static bool
read_core_pattern(char *buf, size_t cap)
{
	FILE *f = fopen(CORE_PATTERN_PATH, "re");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, (int)cap, f) != NULL;
	fclose(f);
	if (!ok)
		buf[0] = '\0';	/* an empty file is a blank pattern */
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

static void
check_rlimit_core(struct check_list *out)
{
	struct rlimit zero = { 0, 0 }, now;
	bool ok = setrlimit(RLIMIT_CORE, &zero) == 0 &&
		  getrlimit(RLIMIT_CORE, &now) == 0 &&
		  now.rlim_cur == 0 && now.rlim_max == 0;

	check_add(out, ID(RLIMIT_CORE), ok, "0/0", ok ? "0/0" : "could not be set");
}

void
preflight_local(struct check_list *out)
{
	struct utsname u;
	char pattern[256];

	preflight_local_facts(uname(&u) == 0 ? u.sysname : NULL,
			      read_core_pattern(pattern, sizeof pattern) ? pattern : NULL,
			      out);
	check_rlimit_core(out);
}

static const char *
str_at(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static void
check_api_version(const json_t *version, struct check_list *out)
{
	const char *api = str_at(version, "ApiVersion");
	int major = 0, minor = 0;
	bool ok = api && sscanf(api, "%d.%d", &major, &minor) == 2 &&
		  (major > 1 || (major == 1 && minor >= 41));

	check_add(out, ID(API_VERSION), ok, ">= 1.41", api ? api : "missing");
	check_add(out, ID(DAEMON_VERSION), str_at(version, "Version") != NULL,
		  "reported", str_at(version, "Version") ? str_at(version, "Version") : "missing");
}

static void
check_platform(const json_t *info, struct check_list *out)
{
	const char *os_type = str_at(info, "OSType");
	const char *os = str_at(info, "OperatingSystem");
	const char *kernel = str_at(info, "KernelVersion");
	const char *cgroup = str_at(info, "CgroupVersion");

	check_add(out, ID(DAEMON_OS_TYPE), os_type && strcmp(os_type, "linux") == 0,
		  "linux", os_type ? os_type : "missing");
	check_add(out, ID(DAEMON_NOT_DESKTOP), os && !strstr(os, "Docker Desktop"),
		  "a native Linux daemon", os ? os : "missing");
	check_add(out, ID(KERNEL_VERSION), kernel != NULL, "reported",
		  kernel ? kernel : "missing");
	check_add(out, ID(CGROUP_VERSION), cgroup != NULL, "reported",
		  cgroup ? cgroup : "missing");
}

/* SecurityOptions holds entries like "name=seccomp,profile=default". */
static void
check_seccomp(const json_t *info, struct check_list *out)
{
	const json_t *opts = json_object_get(info, "SecurityOptions");
	const char *found = NULL;
	size_t i;
	json_t *o;

	json_array_foreach(opts, i, o) {
		const char *s = json_string_value(o);

		if (s && strncmp(s, "name=seccomp", 12) == 0)
			found = s;
	}
	check_add(out, ID(SECCOMP), found && !strstr(found, "profile=unconfined"),
		  "name=seccomp, not unconfined", found ? found : "absent");
}

static void
runtimes_text(const json_t *runtimes, char *buf, size_t cap)
{
	const char *name;
	json_t *v;
	size_t used = 0;

	buf[0] = '\0';
	json_object_foreach((json_t *)runtimes, name, v) {
		int n = snprintf(buf + used, cap - used, "%s%s", used ? "," : "", name);

		if (n < 0 || (size_t)n >= cap - used)
			break;
		used += (size_t)n;
	}
}

static void
check_runtime(const json_t *info, const char *runtime, struct check_list *out,
	      struct host_facts *facts)
{
	const json_t *runtimes = json_object_get(info, "Runtimes");
	char text[CHECK_VALUE_MAX];
	bool present;

	runtimes_text(runtimes, text, sizeof text);
	check_add(out, ID(RUNTIMES), json_is_object(runtimes), "reported",
		  text[0] ? text : "missing");
	present = json_object_get(runtimes, runtime) != NULL;
	check_addf(out, ID(RUNTIME), present, runtime, "%s", present ? runtime : "absent");
	if (facts) {
		facts->runtime_runc = json_object_get(runtimes, "runc") != NULL;
		facts->runtime_runsc = json_object_get(runtimes, "runsc") != NULL;
	}
}

/*
 * The runsc arguments airlock's promises need, as the daemon registered
 * them (Runtimes.runsc.runtimeArgs): without --oci-seccomp Docker's seccomp
 * profile is not loaded inside the sandbox; without --network=none runsc
 * cannot run a NetworkMode none container. Each is a flag and its value.
 */
#define RUNSC_REQUIRED_ARGS(_) \
	_("network",     "none") \
	_("oci-seccomp", "true")

/* "--name=value", "-name=value", "--name value" (value next), bool "--name". */
static const char *
runsc_arg_value(const json_t *args, size_t *i, const char *name)
{
	const char *a = json_string_value(json_array_get(args, *i)), *eq;
	size_t n = strlen(name);

	if (a[0] == '-')
		a++;
	if (a[0] == '-')
		a++;
	if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
		return NULL;
	eq = a[n] == '=' ? a + n + 1 : NULL;
	if (eq)
		return eq;
	if (strcmp(name, "oci-seccomp") == 0)
		return "true";
	(*i)++;
	return json_string_value(json_array_get(args, *i));
}

/* The last value runsc would see for name (Go flags: the last one wins). */
static const char *
runsc_arg_final(const json_t *args, const char *name)
{
	const char *last = NULL, *v;
	size_t i;

	for (i = 0; i < json_array_size(args); i++)
		if ((v = runsc_arg_value(args, &i, name)))
			last = v;
	return last;
}

static bool
runsc_args_strings(const json_t *args)
{
	size_t i;

	if (!json_is_array(args))
		return false;
	for (i = 0; i < json_array_size(args); i++)
		if (!json_is_string(json_array_get(args, i)))
			return false;
	return true;
}

static void
check_runsc_args(const json_t *info, struct check_list *out)
{
	static const struct { const char *name, *value; } need[] = {
#define RUNSC_ARG_ROW(n, v) { n, v },
		RUNSC_REQUIRED_ARGS(RUNSC_ARG_ROW)
#undef RUNSC_ARG_ROW
	};
	const json_t *args = json_object_get(json_object_get(json_object_get(info, "Runtimes"),
							     "runsc"), "runtimeArgs");
	const char *expected = "--network=none --oci-seccomp";
	size_t i;

	if (!runsc_args_strings(args)) {
		check_add(out, ID(RUNSC_ARGS), false, expected, "runtimeArgs not reported");
		return;
	}
	for (i = 0; i < sizeof need / sizeof need[0]; i++) {
		const char *v = runsc_arg_final(args, need[i].name);

		if (!v || strcmp(v, need[i].value) != 0) {
			if (v)
				check_addf(out, ID(RUNSC_ARGS), false, expected, "--%s=%.32s",
					   need[i].name, v);
			else
				check_addf(out, ID(RUNSC_ARGS), false, expected, "--%s missing",
					   need[i].name);
			return;
		}
	}
	check_add(out, ID(RUNSC_ARGS), true, expected, expected);
}

void
preflight_daemon(const json_t *version, const json_t *info, const char *runtime,
		 struct check_list *out, struct host_facts *facts)
{
	if (facts) {
		facts->cores = (int)json_integer_value(json_object_get(info, "NCPU"));
		facts->runtime_runc = facts->runtime_runsc = false;
	}
	check_api_version(version, out);
	check_platform(info, out);
	check_seccomp(info, out);
	check_runtime(info, runtime ? runtime : "runc", out, facts);
	if (runtime && strcmp(runtime, "runsc") == 0)
		check_runsc_args(info, out);
	else
		check_add(out, ID(RUNSC_ARGS), true, "runsc only", "not used: runtime runc");
}

void
preflight_not_run(struct check_list *out, enum host_check_stage from)
{
	int c;

	for (c = 0; c < HOST_CHECK_COUNT; c++)
		if (host_check_stage(c) >= from && host_check_stage(c) <= HOST_STAGE_DAEMON &&
		    !check_list_find(out, host_check_id(c)))
			check_add_not_run(out, host_check_id(c), host_check_help(c));
}
