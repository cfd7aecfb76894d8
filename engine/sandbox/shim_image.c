#include "shim_image.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "airlock-config.h"
#include "profile.h"
#include "tar.h"

#define SHIM_PROGRAM	"airlock-shim"

static bool
usable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The directory of exe (or of this process) into dir; -1 when it cannot be known. */
static int
exe_dir(const char *exe, char *dir, size_t cap)
{
	char self[SHIM_PATH_MAX];
	const char *slash;
	ssize_t n;

	if (!exe || !strchr(exe, '/')) {
		n = readlink("/proc/self/exe", self, sizeof self - 1);
		if (n <= 0)
			return -1;
		self[n] = '\0';
		exe = self;
	}
	slash = strrchr(exe, '/');
	n = snprintf(dir, cap, "%.*s", (int)(slash - exe), exe);
	return n >= 0 && (size_t)n < cap ? 0 : -1;
}

static bool
try_path(char *out, size_t cap, const char *dir, const char *name)
{
	int n = snprintf(out, cap, "%s/%s", dir[0] ? dir : "", name);

	return n > 0 && (size_t)n < cap && usable(out);
}

int
shim_image_locate(const char *exe, char *out, size_t cap, struct al_err *err)
{
	const char *env = getenv("AIRLOCK_SHIM");
	char dir[SHIM_PATH_MAX];

	if (env && env[0]) {
		if (env[0] != '/' || strlen(env) >= cap)
			return al_fail(err, "shim: AIRLOCK_SHIM is not an absolute path");
		memcpy(out, env, strlen(env) + 1);
		if (!usable(out))
			return al_fail(err, "shim: AIRLOCK_SHIM %.160s is not an executable file", env);
		return 0;
	}
	if (exe_dir(exe, dir, sizeof dir) == 0 &&
	    (try_path(out, cap, dir, SHIM_PROGRAM) || try_path(out, cap, dir, "shim/" SHIM_PROGRAM)))
		return 0;
	if (try_path(out, cap, AIRLOCK_LIBEXECDIR, SHIM_PROGRAM))
		return 0;
	return al_fail(err, "shim: no airlock-shim beside the airlock binary nor in %.128s "
		       "(set AIRLOCK_SHIM)", AIRLOCK_LIBEXECDIR);
}

int
shim_image_read(const char *path, unsigned char **buf, size_t *len,
		char hex[HASH_HEX_LEN + 1], struct al_err *err)
{
	FILE *f = fopen(path, "rb");
	struct stat st;

	*buf = NULL;
	*len = 0;
	if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (unsigned long long)st.st_size > SHIM_FILE_MAX) {
		if (f)
			fclose(f);
		return al_fail(err, "shim: cannot read %.160s (a regular file of at most %u bytes)",
			       path, SHIM_FILE_MAX);
	}
	*len = (size_t)st.st_size;
	if (!(*buf = malloc(*len)) || fread(*buf, 1, *len, f) != *len) {
		fclose(f);
		free(*buf);
		*buf = NULL;
		*len = 0;
		return al_fail(err, "shim: cannot read %.160s", path);
	}
	fclose(f);
	hash_sha256_hex(*buf, *len, hex);
	return 0;
}

int
shim_image_engine_digest(const char *exe, char hex[HASH_HEX_LEN + 1], struct al_err *err)
{
	char path[SHIM_PATH_MAX];
	unsigned char *buf;
	size_t len;

	hex[0] = '\0';
	if (shim_image_locate(exe, path, sizeof path, err) < 0 ||
	    shim_image_read(path, &buf, &len, hex, err) < 0)
		return -1;
	free(buf);
	return 0;
}

int
shim_image_dockerfile(const char *image_id, char *out, size_t cap)
{
	int n;

	if (!profile_image_id_valid(image_id))
		return -1;
	n = snprintf(out, cap, "FROM %s\nCOPY shim %s\n", image_id, SHIM_IMAGE_PATH);
	return n > 0 && (size_t)n < cap ? 0 : -1;
}

int
shim_image_add(struct docker *d, const char *image_id, const unsigned char *shim,
	       size_t len, char new_id[DOCKER_ID_MAX], struct al_err *err)
{
	char dockerfile[160], hex[HASH_HEX_LEN + 1];
	struct tar_file files[2] = {
		{ "Dockerfile", dockerfile, 0, 0644 },
		{ "shim", shim, len, SHIM_IMAGE_MODE },
	};
	unsigned char *tar;
	size_t tar_len;
	int rc;

	new_id[0] = '\0';
	if (shim_image_dockerfile(image_id, dockerfile, sizeof dockerfile) < 0)
		return al_fail(err, "shim: not an immutable image ID");
	if (!shim || len == 0)
		return al_fail(err, "shim: empty shim");
	files[0].len = strlen(dockerfile);
	hash_sha256_hex(shim, len, hex);
	if (tar_write(files, 2, &tar, &tar_len, err) < 0)
		return al_wrap(err, "shim: build context");
	rc = docker_build(d, tar, tar_len, SHIM_LABEL, hex, new_id, err);
	free(tar);
	return rc < 0 ? al_wrap(err, "shim: cannot build the image") : 0;
}
