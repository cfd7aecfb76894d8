#include "doctor.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "hash.h"
#include "ids.h"
#include "profile.h"
#include "seccomp_profile.h"
#include "tar.h"

/*
 * runsc_threads (issue #33, engine/admission/seccomp/README.md): under runsc with
 * airlock's seccomp profile, clone3 must answer ENOSYS (gVisor's own
 * answer), so glibc falls back to clone. One probe container per runsc
 * binary and profile; the answer is cached under the binary's and the
 * profile's SHA-256.
 */

/* engine/admission/seccomp/clone3_probe.c, built and embedded (x86-64 only). */
extern const unsigned char seccomp_clone3_probe[];
extern const size_t seccomp_clone3_probe_len;

#define PROBE_LABEL		"io.airlock.probe"
#define PROBE_ENOSYS		38
#define PROBE_EPERM		1
#define PROBE_CHILD		100
#define PROBE_WAIT_MS		30000L
#define RUNSC_BINARY_MAX	(512L << 20)
#define EXPECTED		"ENOSYS with airlock's runsc profile"

static const char probe_dockerfile[] =
	"FROM scratch\nCOPY probe /probe\nENTRYPOINT [\"/probe\"]\n";

/* SHA-256 of the file at path (at most RUNSC_BINARY_MAX bytes); -1 when unreadable. */
static int
file_digest(const char *path, char out[HASH_HEX_LEN + 1])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	off_t size = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
	unsigned char *buf = NULL;
	ssize_t got = -1;

	if (size > 0 && size <= RUNSC_BINARY_MAX && (buf = malloc((size_t)size)))
		got = pread(fd, buf, (size_t)size, 0);
	if (fd >= 0)
		close(fd);
	if (got == size && size > 0)
		hash_sha256_hex(buf, (size_t)size, out);
	free(buf);
	return got == size && size > 0 ? 0 : -1;
}

/* The cache file: $XDG_CACHE_HOME/airlock/runsc-clone3, else ~/.cache/…; -1 without either. */
static int
cache_path(char *out, size_t cap)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(out, cap, "%s/airlock/runsc-clone3", xdg);
	else if (home && home[0] == '/')
		n = snprintf(out, cap, "%s/.cache/airlock/runsc-clone3", home);
	else
		return -1;
	return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* The cached answer for key: true when a probe passed with this runsc and profile. */
static bool
cache_says_pass(const char *key)
{
	char path[4096], line[2 * HASH_HEX_LEN + 16], want[2 * HASH_HEX_LEN + 16];
	FILE *f;
	bool pass = false;

	if (cache_path(path, sizeof path) < 0 || !(f = fopen(path, "re")))
		return false;
	snprintf(want, sizeof want, "%s ENOSYS\n", key);
	pass = fgets(line, sizeof line, f) && strcmp(line, want) == 0;
	fclose(f);
	return pass;
}

static void
cache_pass(const char *key)
{
	char path[4096], tmp[4200], *slash;
	FILE *f;

	if (cache_path(path, sizeof path) < 0)
		return;
	for (slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0700);
		*slash = '/';
	}
	snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
	if (!(f = fopen(tmp, "we")))
		return;
	fprintf(f, "%s ENOSYS\n", key);
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		unlink(tmp);
}

/* The probe image: built once, found again by its label (the probe's digest). */
static int
probe_image(struct docker *d, char id[DOCKER_ID_MAX], struct al_err *err)
{
	struct tar_file files[] = {
		{ "Dockerfile", probe_dockerfile, sizeof probe_dockerfile - 1, 0644 },
		{ "probe", seccomp_clone3_probe, seccomp_clone3_probe_len, 0755 },
	};
	char digest[HASH_HEX_LEN + 1], label[sizeof PROBE_LABEL + HASH_HEX_LEN + 16];
	unsigned char *tar;
	size_t len;
	int rc;

	hash_sha256_hex(seccomp_clone3_probe, seccomp_clone3_probe_len, digest);
	snprintf(label, sizeof label, "%s=clone3-%.16s", PROBE_LABEL, digest);
	rc = docker_image_by_label(d, label, id, err);
	if (rc <= 0)
		return rc;
	if (tar_write(files, 2, &tar, &len, err) < 0)
		return -1;
	snprintf(label, sizeof label, "clone3-%.16s", digest);
	rc = docker_build(d, tar, len, PROBE_LABEL, label, id, err);
	free(tar);
	return rc;
}

/* The probe's container: runsc, airlock's profile, nothing else granted. */
static json_t *
probe_body(const char *image)
{
	return json_pack("{s:s, s:s, s:b, s:{s:s, s:s, s:b, s:[s], s:o, s:{s:s}, s:I, s:I}}",
			 "Image", image, "User", "10001:10001", "NetworkDisabled", 1,
			 "HostConfig", "Runtime", "runsc", "NetworkMode", "none",
			 "ReadonlyRootfs", 1, "CapDrop", "ALL",
			 "SecurityOpt", seccomp_security_opt("runsc"),
			 "LogConfig", "Type", "none",
			 "PidsLimit", (json_int_t)PROFILE_PIDS_RUNSC,
			 "Memory", (json_int_t)PROFILE_MEMORY_DEFAULT);
}

/* Run the probe once: its exit status, or -1 with err. */
static int
probe_run(struct docker *d, long *status, struct al_err *err)
{
	char image[DOCKER_ID_MAX], name[48], id[DOCKER_ID_MAX];
	json_t *body;
	bool timed_out = false;
	int rc;

	if (probe_image(d, image, err) < 0 || id_random(name, sizeof name, "airlock-probe-", 8) < 0)
		return -1;
	body = probe_body(image);
	if (!body)
		return al_fail(err, "out of memory");
	rc = docker_create(d, name, body, id, err);
	json_decref(body);
	if (rc < 0)
		return -1;
	rc = docker_start(d, id, err);
	if (rc == 0)
		rc = docker_wait_for(d, id, PROBE_WAIT_MS, status, &timed_out, err);
	if (rc == 0 && timed_out)
		rc = al_fail(err, "the probe did not exit within 30 s");
	docker_remove(d, id, true, NULL);
	return rc;
}

static const char *
probe_answer(long status)
{
	switch (status) {
	case PROBE_ENOSYS: return "ENOSYS";
	case PROBE_EPERM: return "EPERM (glibc would start no thread)";
	case PROBE_CHILD: return "a child was created: gVisor implements clone3, use the default profile";
	default: return "an unexpected exit status";
	}
}

/* The cache key: runsc's binary (from /info) and the profile. */
static int
runsc_key(struct docker *d, char *key, size_t cap, struct al_err *err)
{
	json_t *info = NULL;
	const char *path;
	char bin[HASH_HEX_LEN + 1];
	int rc = -1;

	if (docker_info(d, &info, err) < 0)
		return -1;
	path = json_string_value(json_object_get(json_object_get(json_object_get(info, "Runtimes"),
								 "runsc"), "path"));
	if (!path)
		al_fail(err, "the daemon reports no runsc path");
	else if (file_digest(path, bin) < 0)
		al_fail(err, "cannot read the runsc binary the daemon names");
	else if (snprintf(key, cap, "%.64s-%.64s", bin, seccomp_runsc_digest()) > 0)
		rc = 0;
	json_decref(info);
	return rc;
}

void
doctor_probe_clone3(struct doctor_report *r, const char *runtime)
{
	const char *id = host_check_id(HOST_CHECK_RUNSC_THREADS);
	char key[2 * HASH_HEX_LEN + 2];
	struct al_err err = { "" };
	struct docker *d;
	long status = -1;

	if (!runtime || strcmp(runtime, "runsc") != 0) {
		check_add(&r->checks, id, true, "runsc only", "not used: runtime runc");
		return;
	}
	if (seccomp_clone3_probe_len == 0) {
		check_add(&r->checks, id, false, EXPECTED, "no probe for this architecture");
		return;
	}
	d = r->socket[0] ? docker_open(r->socket, DOCKER_TIMEOUT_MS, &err) : NULL;
	if (!d || runsc_key(d, key, sizeof key, &err) < 0) {
		check_add(&r->checks, id, false, EXPECTED, d ? err.msg : "no daemon");
	} else if (cache_says_pass(key)) {
		check_add(&r->checks, id, true, EXPECTED, "ENOSYS (cached for this runsc)");
	} else if (probe_run(d, &status, &err) < 0) {
		check_add(&r->checks, id, false, EXPECTED, err.msg);
	} else {
		check_add(&r->checks, id, status == PROBE_ENOSYS, EXPECTED, probe_answer(status));
		if (status == PROBE_ENOSYS)
			cache_pass(key);
	}
	docker_close(d);
}
