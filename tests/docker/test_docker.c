/*
 * The Docker suite: the engine's container operations against the real
 * daemon. Hardened containers are admitted and round-trip a line through
 * the attach stream; weakened ones are created for real and refused under
 * the right check id. Every container is removed and the label re-listed.
 *
 * Environment (set by run.sh): AIRLOCK_TEST_IMAGE, AIRLOCK_TEST_IMAGE_VOLUME,
 * AIRLOCK_TEST_SOCKET, AIRLOCK_BIN; CI makes skips failures.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "admission.h"
#include "container.h"
#include "docker.h"
#include "tar.h"
#include "clock.h"
#include "preflight.h"
#include "profile.h"

struct suite {
	struct docker *d;
	const char *sock;
	const char *image;
	const char *image_volume;
	struct owner_labels who;
	struct host_facts facts;
	char label[96];		/* io.airlock.session=<this run> */
};

static struct suite S;

static const char *
env_or_fail(const char *name)
{
	const char *v = getenv(name);

	if (!v || !v[0]) {
		fprintf(stderr, "test_docker: %s is not set (run through tests/docker/run.sh)\n", name);
		exit(1);
	}
	return v;
}

static int
suite_setup(void **state)
{
	struct check_list scratch;
	struct al_err err;
	json_t *version = NULL, *info = NULL;
	char session[ID_MAX];

	(void)state;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	S.sock = env_or_fail("AIRLOCK_TEST_SOCKET");
	S.image = env_or_fail("AIRLOCK_TEST_IMAGE");
	S.image_volume = env_or_fail("AIRLOCK_TEST_IMAGE_VOLUME");
	S.d = docker_open(S.sock, DOCKER_TIMEOUT_MS, &err);
	if (!S.d || docker_version(S.d, &version, &err) < 0 || docker_info(S.d, &info, &err) < 0) {
		fprintf(stderr, "test_docker: %s\n", err.msg);
		return -1;
	}
	check_list_init(&scratch);
	preflight_daemon(version, info, "runc", &scratch, &S.facts);
	check_list_free(&scratch);
	json_decref(version);
	json_decref(info);
	snprintf(session, sizeof session, "test-%ld-%ld", (long)getpid(), (long)time(NULL));
	if (owner_labels_self(&S.who, session, &err) < 0)
		return -1;
	snprintf(S.label, sizeof S.label, "%s=%s", LABEL_SESSION, session);
	return 0;
}

static size_t
count_labelled(void)
{
	struct al_err err;
	json_t *list = NULL;
	size_t n;

	assert_int_equal(docker_list_by_label(S.d, S.label, &list, &err), 0);
	n = json_array_size(list);
	json_decref(list);
	return n;
}

static int
suite_teardown(void **state)
{
	struct al_err err;
	json_t *list = NULL, *c;
	size_t i;

	(void)state;
	/* Leave nothing behind even when a test failed half-way. */
	if (docker_list_by_label(S.d, S.label, &list, &err) == 0)
		json_array_foreach(list, i, c)
			docker_remove(S.d, json_string_value(json_object_get(c, "Id")), true, &err);
	json_decref(list);
	docker_close(S.d);
	return 0;
}

static void
test_profile(struct profile *p, const char *image, const char *runtime)
{
	profile_defaults(p);
	snprintf(p->image, sizeof p->image, "%s", image);
	if (strcmp(runtime, "runsc") == 0) {
		snprintf(p->runtime, sizeof p->runtime, "runsc");
		p->pids_limit = PROFILE_PIDS_RUNSC;
		p->nproc = PROFILE_NPROC_RUNSC;
	}
}

static void
create_from(json_t *body, char id[DOCKER_ID_MAX])
{
	char name[PROFILE_NAME_MAX];
	struct al_err err;

	assert_int_equal(profile_container_name(name, &err), 0);
	if (docker_create(S.d, name, body, id, &err) < 0)
		fail_msg("create: %s", err.msg);
}

/* A container created (not started) from the test profile over image;
 * the caller frees p. */
static void
create_profiled(struct profile *p, const char *image, char id[DOCKER_ID_MAX])
{
	json_t *body;

	test_profile(p, image, "runc");
	body = profile_create_body(p, &S.who);
	create_from(body, id);
	json_decref(body);
}

static struct container *
new_container(void)
{
	struct container *c = container_new(S.d, S.sock);

	assert_non_null(c);
	return c;
}

/* A container from the test profile, admitted and started; the caller
 * cleans it up and frees it and p. */
static struct container *
start_profiled(struct profile *p)
{
	struct container *c;
	struct al_err err;

	test_profile(p, S.image, "runc");
	c = new_container();
	if (container_create_admit(c, p, &S.who, &S.facts, &err) < 0 ||
	    container_attach_start(c, &err) < 0)
		fail_msg("%s", err.msg);
	return c;
}

/* Inspect and admit; the caller frees the report. */
static bool
admit(const char *id, const struct profile *p, struct check_list *report)
{
	struct al_err err;

	check_list_init(report);
	return container_admit(S.d, id, p, &S.facts, report, &err) == 0;
}

static void
print_refusals(const struct check_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!l->items[i].pass)
			print_message("  refused %s: observed %s, expected %s\n", l->items[i].id,
				      l->items[i].observed, l->items[i].expected);
}

struct capture {
	char out[4096];
	size_t out_len;
	size_t err_bytes;
};

static int
on_chunk(enum docker_stream stream, const unsigned char *data, size_t len, void *ctx)
{
	struct capture *cap = ctx;

	if (stream == DOCKER_STDERR) {
		cap->err_bytes += len;
		return 0;
	}
	if (len > sizeof cap->out - 1 - cap->out_len)
		len = sizeof cap->out - 1 - cap->out_len;
	memcpy(cap->out + cap->out_len, data, len);
	cap->out_len += len;
	cap->out[cap->out_len] = '\0';
	return 0;
}

/* Poll the stream until stdout holds needle or EOF or 10 s pass. */
static enum attach_io
read_until(struct docker_attach *a, struct capture *cap, const char *needle)
{
	struct al_err err;
	enum attach_io io = ATTACH_AGAIN;
	int waited;

	for (waited = 0; waited < 10000 && !(needle && strstr(cap->out, needle)); ) {
		struct pollfd pfd = { .fd = docker_attach_fd(a), .events = POLLIN };

		if (poll(&pfd, 1, 100) == 0) {
			waited += 100;
			continue;
		}
		io = docker_attach_read(a, on_chunk, cap, &err);
		if (io == ATTACH_EOF || io == ATTACH_ERROR)
			break;
	}
	return io;
}

static void
send_line(struct docker_attach *a, const char *line)
{
	struct al_err err;

	if (docker_attach_write(a, line, strlen(line), 5000, &err) < 0)
		fail_msg("attach write: %s", err.msg);
}

/*
 * The whole life of one hardened container through the engine's container
 * module: create, first admission, attach, start, second admission, a line
 * each way, stdin EOF, exit code, stop, remove, re-list.
 */
static void
round_trip(const char *runtime)
{
	struct profile p;
	struct container *c;
	struct capture cap = { 0 };
	struct al_err err;
	long code = -1;

	test_profile(&p, S.image, runtime);
	c = new_container();
	if (container_create_admit(c, &p, &S.who, &S.facts, &err) < 0) {
		print_refusals(container_report(c, 1));
		fail_msg("%s", err.msg);
	}
	assert_true(check_list_passed(container_report(c, 1)));
	if (container_attach_start(c, &err) < 0 || container_readmit(c, &p, &S.facts, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(check_list_passed(container_report(c, 2)));

	send_line(container_stream(c), "id\n");
	send_line(container_stream(c), "hello airlock\n");
	read_until(container_stream(c), &cap, "echo: hello airlock\n");
	assert_non_null(strstr(cap.out, "id: uid=10001 gid=10001\n"));
	assert_non_null(strstr(cap.out, "echo: hello airlock\n"));

	assert_int_equal(docker_attach_close_stdin(container_stream(c)), 0);
	assert_int_equal(read_until(container_stream(c), &cap, NULL), ATTACH_EOF);
	assert_true(cap.err_bytes > 0);		/* stderr arrived, separately */
	assert_null(strstr(cap.out, "echoer:"));
	assert_int_equal(docker_wait(S.d, container_id(c), &code, &err), 0);
	assert_int_equal(code, 0);
	if (container_cleanup(c, &err) < 0)
		fail_msg("cleanup: %s", err.msg);
	assert_int_equal(container_exit_code(c), 0);
	assert_false(container_is(c, CONTAINER_OOM_KILLED));
	assert_int_equal(count_labelled(), 0);
	container_free(c);
	profile_free(&p);
}

/* Cleanup stops a running container whose stream is still open. */
static void
test_cleanup_stops_running(void **state)
{
	struct profile p;
	struct container *c;
	struct al_err err;
	json_t *list = NULL;

	(void)state;
	c = start_profiled(&p);
	assert_int_equal(docker_list_by_label(S.d, S.label, &list, &err), 0);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "State")), "running");
	json_decref(list);
	if (container_cleanup(c, &err) < 0)
		fail_msg("cleanup: %s", err.msg);
	/* Ended by the t=0 stop's signal (TERM then KILL), not by stdin EOF. */
	assert_true(container_exit_code(c) == 143 || container_exit_code(c) == 137);
	assert_int_equal(count_labelled(), 0);
	container_free(c);
	profile_free(&p);
}

/*
 * The exit path: the daemon's wait bounds a running container by its
 * deadline (1: still runs), reports the exit once stdin closes, and the
 * removal is proven by one look-up: present before, gone after.
 */
static void
test_wait_exit_and_gone(void **state)
{
	struct profile p;
	struct container *c;
	struct al_err err;
	long code = -1;
	bool gone = true;
	int64_t t0;

	(void)state;
	c = start_profiled(&p);
	t0 = clock_mono_ms();
	assert_int_equal(container_wait_exit(c, 300, &code, &err), 1);
	assert_true(clock_mono_ms() - t0 < 3000);
	assert_false(container_is(c, CONTAINER_EXITED));
	assert_int_equal(docker_gone(S.d, container_id(c), &gone, &err), 0);
	assert_false(gone);
	assert_int_equal(docker_attach_close_stdin(container_stream(c)), 0);
	assert_int_equal(container_wait_exit(c, 10000, &code, &err), 0);
	assert_int_equal(code, 0);
	assert_true(container_is(c, CONTAINER_EXITED));
	if (container_cleanup(c, &err) < 0)
		fail_msg("cleanup: %s", err.msg);
	assert_true(container_is(c, CONTAINER_REMOVED));
	assert_int_equal(container_exit_code(c), 0);
	assert_int_equal(docker_gone(S.d, container_id(c), &gone, &err), 0);
	assert_true(gone);
	assert_int_equal(count_labelled(), 0);
	assert_int_equal(docker_gone(S.d, "", &gone, &err), -1);	/* no subject: no verdict */
	container_free(c);
	profile_free(&p);
}

/* A refused launch starts nothing and leaves nothing behind. */
static void
test_refused_launch_cleans_up(void **state)
{
	struct profile p;
	struct container *c;
	struct al_err err;

	(void)state;
	test_profile(&p, S.image_volume, "runc");
	c = new_container();
	assert_int_equal(container_create_admit(c, &p, &S.who, &S.facts, &err), -1);
	assert_non_null(strstr(err.msg, "admission refused: image_volumes"));
	assert_false(container_is(c, CONTAINER_STARTED));
	assert_int_equal(container_cleanup(c, &err), 0);
	assert_int_equal(count_labelled(), 0);
	container_free(c);
	profile_free(&p);
}

static void
test_round_trip_runc(void **state)
{
	(void)state;
	round_trip("runc");
}

static void
test_round_trip_runsc(void **state)
{
	(void)state;
	if (!S.facts.runtime_runsc) {
		if (getenv("CI") && getenv("CI")[0])
			fail_msg("CI is set but the daemon has no runsc runtime (scripts/setup registers it)");
		print_message("#### SKIPPED: runsc is not a runtime of this daemon; gVisor NOT verified\n");
		skip();
	}
	round_trip("runsc");
}

/* A weakened container: one field of the hardened body changed. */
struct mutant {
	const char *name;
	const char *json_path[2];	/* object, key (object NULL: top level) */
	const char *value;		/* JSON text of the new value */
	const char *check;		/* the check id that must refuse */
	bool volume_image;		/* use the image that declares a VOLUME */
};

static const struct mutant mutants[] = {
	{ "network host", { "HostConfig", "NetworkMode" }, "\"host\"", "network_mode", false },
	{ "network enabled", { NULL, "NetworkDisabled" }, "false", "network_disabled", false },
	{ "writable root", { "HostConfig", "ReadonlyRootfs" }, "false", "readonly_rootfs", false },
	{ "json-file logs", { "HostConfig", "LogConfig" }, "{\"Type\":\"json-file\"}", "log_config", false },
	{ "cap-add NET_RAW", { "HostConfig", "CapAdd" }, "[\"NET_RAW\"]", "cap_add", false },
	{ "user 0", { NULL, "User" }, "\"0\"", "user", false },
	{ "pids-limit 0", { "HostConfig", "PidsLimit" }, "0", "pids_limit", false },
	{ "ipc private", { "HostConfig", "IpcMode" }, "\"private\"", "ipc_mode", false },
	{ "docker.sock bind", { "HostConfig", "Binds" },
	  "[\"/var/run/docker.sock:/var/run/docker.sock\"]", "docker_sock", false },
	{ "image VOLUME", { NULL, NULL }, NULL, "image_volumes", true },
};

static void
mutate(json_t *body, const struct mutant *m)
{
	json_t *target = m->json_path[0] ? json_object_get(body, m->json_path[0]) : body;
	json_t *v;

	if (!m->value)
		return;
	v = json_loads(m->value, JSON_DECODE_ANY, NULL);
	assert_non_null(v);
	assert_int_equal(json_object_set_new(target, m->json_path[1], v), 0);
}

static void
refuse_one(const struct mutant *m)
{
	struct profile p;
	struct check_list report;
	const struct check_item *it;
	struct al_err err;
	char id[DOCKER_ID_MAX];
	json_t *body;

	test_profile(&p, m->volume_image ? S.image_volume : S.image, "runc");
	body = profile_create_body(&p, &S.who);
	mutate(body, m);
	create_from(body, id);
	json_decref(body);
	assert_false(admit(id, &p, &report));
	it = check_list_find(&report, m->check);
	if (!it || it->pass) {
		print_refusals(&report);
		fail_msg("%s: not refused under %s", m->name, m->check);
	}
	print_message("  %-18s refused: %s observed %s\n", m->name, it->id, it->observed);
	check_list_free(&report);
	assert_int_equal(docker_remove(S.d, id, false, &err), 0);
	profile_free(&p);
}

static void
test_weakened_containers_refused(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof mutants / sizeof mutants[0]; i++)
		refuse_one(&mutants[i]);
	assert_int_equal(count_labelled(), 0);
}

/* The anonymous volume an image VOLUME creates is itself refused and removed. */
static void
test_volume_image_mounts(void **state)
{
	struct profile p;
	struct check_list report;
	struct al_err err;
	char id[DOCKER_ID_MAX];

	(void)state;
	create_profiled(&p, S.image_volume, id);
	assert_false(admit(id, &p, &report));
	assert_false(check_list_find(&report, "image_volumes")->pass);
	assert_false(check_list_find(&report, "container_volumes")->pass);
	assert_false(check_list_find(&report, "anon_mounts")->pass);
	check_list_free(&report);
	assert_int_equal(docker_remove(S.d, id, false, &err), 0);
	profile_free(&p);
}

static int
run_cli(const char *args, char *out, size_t cap)
{
	char cmd[512];
	size_t n;
	FILE *f;
	int rc;

	snprintf(cmd, sizeof cmd, "%s %s 2>&1", env_or_fail("AIRLOCK_BIN"), args);
	f = popen(cmd, "r");
	assert_non_null(f);
	n = fread(out, 1, cap - 1, f);
	out[n] = '\0';
	rc = pclose(f);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void
test_inspect_command(void **state)
{
	struct profile p;
	struct al_err err;
	char id[DOCKER_ID_MAX], args[128], out[8192];
	json_t *body;

	(void)state;
	test_profile(&p, S.image, "runc");
	body = profile_create_body(&p, &S.who);
	create_from(body, id);
	snprintf(args, sizeof args, "inspect %s", id);
	assert_int_equal(run_cli(args, out, sizeof out), 0);
	assert_non_null(strstr(out, "admitted"));
	assert_int_equal(docker_remove(S.d, id, false, &err), 0);

	json_object_set_new(json_object_get(body, "HostConfig"), "NetworkMode", json_string("host"));
	create_from(body, id);
	json_decref(body);
	snprintf(args, sizeof args, "inspect --json %s", id);
	assert_int_equal(run_cli(args, out, sizeof out), 1);
	assert_non_null(strstr(out, "\"admitted\":false"));
	assert_non_null(strstr(out, "{\"check\":\"network_mode\",\"expected\":\"none\",\"observed\":\"host\",\"verdict\":\"refuse\"}"));
	assert_int_equal(docker_remove(S.d, id, false, &err), 0);
	assert_int_equal(run_cli("inspect airlock-no-such-container", out, sizeof out), 3);
	assert_non_null(strstr(out, "404"));
	profile_free(&p);
}

static void
test_archive_from_created_container(void **state)
{
	struct profile p;
	struct al_err err;
	char id[DOCKER_ID_MAX];
	unsigned char *tar = NULL;
	const unsigned char *data;
	size_t len, data_len;

	(void)state;
	create_profiled(&p, S.image, id);
	if (docker_archive_get(S.d, id, "/echoer", 8 << 20, &tar, &len, &err) < 0)
		fail_msg("archive: %s", err.msg);
	assert_int_equal(tar_first_file(tar, len, &data, &data_len, &err), 0);
	assert_true(data_len > 4);
	assert_memory_equal(data, "\177ELF", 4);
	free(tar);
	assert_int_equal(docker_remove(S.d, id, false, &err), 0);
	profile_free(&p);
}

struct event_log {
	pthread_mutex_t lock;
	char actions[512];
	atomic_bool stop;
	int rc;
};

static int
on_event(const json_t *ev, void *ctx)
{
	struct event_log *log = ctx;
	const char *action = json_string_value(json_object_get(ev, "Action"));

	if (!action)
		return 0;
	pthread_mutex_lock(&log->lock);
	if (strlen(log->actions) + strlen(action) + 2 < sizeof log->actions) {
		strcat(log->actions, action);
		strcat(log->actions, " ");
	}
	pthread_mutex_unlock(&log->lock);
	return 0;
}

static void *
event_thread(void *arg)
{
	struct event_log *log = arg;
	struct al_err err;
	char filters[192];

	snprintf(filters, sizeof filters, "{\"type\":[\"container\"],\"label\":[\"%s\"]}", S.label);
	log->rc = docker_events(S.sock, filters, on_event, log, &log->stop, &err);
	return NULL;
}

static bool
seen(struct event_log *log, const char *action)
{
	bool found;

	pthread_mutex_lock(&log->lock);
	found = strstr(log->actions, action) != NULL;
	pthread_mutex_unlock(&log->lock);
	return found;
}

static bool
seen_life(struct event_log *log)
{
	return seen(log, "create") && seen(log, "start") && seen(log, "die") &&
	       seen(log, "destroy");
}

/*
 * The events stream reports a container's whole life, filtered by our
 * label. Nothing tells when the subscription has reached the daemon, so a
 * container's life that began before it may be seen only in part: each
 * round trip starts a fresh log, and one of them must be seen whole.
 */
static void
test_events_stream(void **state)
{
	struct event_log log = { .lock = PTHREAD_MUTEX_INITIALIZER };
	pthread_t t;
	int trip, i;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, event_thread, &log), 0);
	for (trip = 0; trip < 5 && !seen_life(&log); trip++) {
		pthread_mutex_lock(&log.lock);
		log.actions[0] = '\0';
		pthread_mutex_unlock(&log.lock);
		round_trip("runc");
		for (i = 0; i < 50 && !seen(&log, "destroy"); i++)
			usleep(100 * 1000);
	}
	atomic_store(&log.stop, true);
	pthread_join(t, NULL);
	print_message("  events: %s\n", log.actions);
	assert_true(seen(&log, "create"));
	assert_true(seen(&log, "start"));
	assert_true(seen(&log, "die"));
	assert_true(seen(&log, "destroy"));
}

/* --- leak proofs: each protection removed must leak at its observer ---- */

/* A loopback TCP observer on the host: counts accepted connections. */
struct observer {
	int fd;
	int port;
	pthread_t thread;
	atomic_int accepted;
	atomic_bool stop;
};

static void *
observer_main(void *arg)
{
	struct observer *o = arg;

	while (!atomic_load(&o->stop)) {
		struct pollfd p = { .fd = o->fd, .events = POLLIN };
		int c;

		if (poll(&p, 1, 100) <= 0)
			continue;
		c = accept(o->fd, NULL, NULL);
		if (c >= 0) {
			atomic_fetch_add(&o->accepted, 1);
			close(c);
		}
	}
	return NULL;
}

static void
observer_start(struct observer *o)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof sa;

	memset(o, 0, sizeof *o);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);	/* never any other address */
	o->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(o->fd >= 0);
	assert_int_equal(bind(o->fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(o->fd, 8), 0);
	assert_int_equal(getsockname(o->fd, (struct sockaddr *)&sa, &len), 0);
	o->port = ntohs(sa.sin_port);
	assert_int_equal(pthread_create(&o->thread, NULL, observer_main, o), 0);
}

static int
observer_stop(struct observer *o)
{
	atomic_store(&o->stop, true);
	pthread_join(o->thread, NULL);
	close(o->fd);
	return atomic_load(&o->accepted);
}

/*
 * Run the echoer in a container made from body (admission is bypassed
 * here on purpose, only to show the leak), feed it lines, and return what
 * it said on stdout. The container is left stopped for the observers.
 */
static void
run_probe(json_t *body, const char *const *lines, const char *last, char id[DOCKER_ID_MAX],
	  struct capture *cap)
{
	struct docker_attach *a = NULL;
	struct al_err err;
	long code;

	create_from(body, id);
	if (docker_attach_open(S.sock, id, DOCKER_TIMEOUT_MS, &a, &err) < 0 ||
	    docker_start(S.d, id, &err) < 0)
		fail_msg("probe: %s", err.msg);
	for (; *lines; lines++)
		send_line(a, *lines);
	read_until(a, cap, last);
	docker_attach_close_stdin(a);
	read_until(a, cap, NULL);
	docker_attach_close(a);
	docker_wait(S.d, id, &code, &err);
}

static json_t *
probe_body(const char *mutate_key, json_t *value)
{
	struct profile p;
	json_t *body;

	test_profile(&p, S.image, "runc");
	body = profile_create_body(&p, &S.who);
	profile_free(&p);
	if (mutate_key)
		json_object_set_new(json_object_get(body, "HostConfig"), mutate_key, value);
	return body;
}

/*
 * Network: with networking disabled or NetworkMode none the host's
 * 127.0.0.1 is unreachable; it takes both removed to reach it.
 */
static int
network_leaks(json_t *body)
{
	struct observer o;
	struct capture cap = { 0 };
	char line[32], id[DOCKER_ID_MAX];
	const char *lines[] = { line, NULL };
	struct al_err err;

	observer_start(&o);
	snprintf(line, sizeof line, "tcp4 %d\n", o.port);
	run_probe(body, lines, "tcp4:", id, &cap);
	docker_remove(S.d, id, false, &err);
	return observer_stop(&o);
}

static void
test_network_leak_proof(void **state)
{
	json_t *body = probe_body(NULL, NULL);

	(void)state;
	assert_int_equal(network_leaks(body), 0);		/* protected: nothing */
	json_decref(body);
	body = probe_body("NetworkMode", json_string("host"));
	assert_int_equal(network_leaks(body), 0);		/* NetworkDisabled holds */
	json_object_set_new(body, "NetworkDisabled", json_false());
	assert_true(network_leaks(body) >= 1);			/* both gone: delivered */
	json_decref(body);
	body = probe_body(NULL, NULL);
	json_object_set_new(body, "NetworkDisabled", json_false());
	assert_int_equal(network_leaks(body), 0);		/* NetworkMode none holds */
	json_decref(body);
}

/*
 * Root filesystem: /work belongs to the agent's uid, so only the read-only
 * root stands between it and a file that survives for `docker cp`.
 */
static bool
file_leaks(json_t *body)
{
	const char *lines[] = { "write /work/leak\n", NULL };
	struct capture cap = { 0 };
	unsigned char *tar = NULL;
	char id[DOCKER_ID_MAX];
	struct al_err err;
	size_t len;
	bool found;

	run_probe(body, lines, "write:", id, &cap);
	found = docker_archive_get(S.d, id, "/work/leak", 1 << 20, &tar, &len, &err) == 0;
	free(tar);
	docker_remove(S.d, id, false, &err);
	return found;
}

static void
test_rootfs_leak_proof(void **state)
{
	json_t *body = probe_body(NULL, NULL);

	(void)state;
	assert_false(file_leaks(body));
	json_decref(body);
	body = probe_body("ReadonlyRootfs", json_false());
	assert_true(file_leaks(body));
	json_decref(body);
}

/* Logs: with the none driver the daemon keeps nothing to read back. */
static bool
log_leaks(json_t *body, const char *canary)
{
	const char *lines[] = { canary, NULL };
	struct capture cap = { 0 };
	char id[DOCKER_ID_MAX], cmd[160], out[4096];
	struct al_err err;
	size_t n;
	FILE *f;

	run_probe(body, lines, "echo:", id, &cap);
	snprintf(cmd, sizeof cmd, "/usr/bin/docker logs %s 2>/dev/null", id);
	f = popen(cmd, "r");
	assert_non_null(f);
	n = fread(out, 1, sizeof out - 1, f);
	out[n] = '\0';
	pclose(f);
	docker_remove(S.d, id, false, &err);
	return strstr(out, "LOG-CANARY") != NULL;
}

static void
test_log_leak_proof(void **state)
{
	json_t *body = probe_body(NULL, NULL);

	(void)state;
	assert_false(log_leaks(body, "LOG-CANARY-1\n"));
	json_decref(body);
	body = probe_body("LogConfig", json_pack("{s:s}", "Type", "json-file"));
	assert_true(log_leaks(body, "LOG-CANARY-2\n"));
	json_decref(body);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_runc),
		cmocka_unit_test(test_round_trip_runsc),
		cmocka_unit_test(test_cleanup_stops_running),
		cmocka_unit_test(test_wait_exit_and_gone),
		cmocka_unit_test(test_refused_launch_cleans_up),
		cmocka_unit_test(test_weakened_containers_refused),
		cmocka_unit_test(test_volume_image_mounts),
		cmocka_unit_test(test_inspect_command),
		cmocka_unit_test(test_archive_from_created_container),
		cmocka_unit_test(test_events_stream),
		cmocka_unit_test(test_network_leak_proof),
		cmocka_unit_test(test_rootfs_leak_proof),
		cmocka_unit_test(test_log_leak_proof),
	};

	return cmocka_run_group_tests_name("docker", tests, suite_setup, suite_teardown);
}
