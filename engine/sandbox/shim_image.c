#include "shim_image.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "airlock-config.h"
#include "profile.h"
#include "self_exe.h"
#include "tar.h"

#define SHIM_PROGRAM	"airlock-shim"

int
shim_image_locate(const char *exe, char *out, size_t cap, struct al_err *err)
{
	const char *env = getenv("AIRLOCK_SHIM");
	int n;

	if (env && env[0]) {
		if (env[0] != '/' || strlen(env) >= cap)
			return al_fail(err, "shim: AIRLOCK_SHIM is not an absolute path");
		memcpy(out, env, strlen(env) + 1);
		if (!self_exe_usable(out))
			return al_fail(err, "shim: AIRLOCK_SHIM %.160s is not an executable file", env);
		return 0;
	}
	if (self_exe_sibling(exe, SHIM_PROGRAM, out, cap) == 0 ||
	    self_exe_sibling(exe, "shim/" SHIM_PROGRAM, out, cap) == 0)
		return 0;
	n = snprintf(out, cap, "%s/%s", AIRLOCK_LIBEXECDIR, SHIM_PROGRAM);
	if (n > 0 && (size_t)n < cap && self_exe_usable(out))
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
