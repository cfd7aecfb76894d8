/*
 * The demo's agent images (demo_image.h): the fixture agent's, built here
 * from the binary, and the MCP agent's, by its script.
 */
#include "demo_image.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "docker.h"
#include "hash.h"
#include "preflight.h"
#include "tar.h"

#define DEMO_AGENT_MAX		(64u << 20)	/* a static test binary is < 1 MiB */
#define DEMO_IMAGE_SCRIPT_MS	120000	/* demo_image.sh: copies Node.js and the SDK once */

/* --- the fixture agent's image ------------------------------------------------ */

static int
demo_read_agent(const char *path, unsigned char **buf, size_t *len, struct al_err *err)
{
	FILE *f = fopen(path, "rb");
	struct stat st;

	*buf = NULL;
	*len = 0;
	if (!f || fstat(fileno(f), &st) != 0 || st.st_size <= 0 ||
	    (unsigned long long)st.st_size > DEMO_AGENT_MAX) {
		if (f)
			fclose(f);
		return al_fail(err, "demo: cannot read the fixture agent %.160s", path);
	}
	*len = (size_t)st.st_size;
	if (!(*buf = malloc(*len)) || fread(*buf, 1, *len, f) != *len) {
		fclose(f);
		free(*buf);
		*buf = NULL;
		return al_fail(err, "demo: cannot read the fixture agent %.160s", path);
	}
	fclose(f);
	return 0;
}

static int
demo_build_image(struct docker *dk, const unsigned char *agent, size_t len,
		 const char *hash, char id[DOCKER_ID_MAX], struct al_err *err)
{
	static const char dockerfile[] =
		"FROM scratch\nCOPY agent /agent\nENTRYPOINT [\"/agent\"]\n";
	const struct tar_file files[] = {
		{ "Dockerfile", dockerfile, sizeof dockerfile - 1, 0644 },
		{ "agent", agent, len, 0755 },
	};
	unsigned char *tar;
	size_t tar_len;
	int rc;

	if (tar_write(files, 2, &tar, &tar_len, err) < 0)
		return al_wrap(err, "demo: agent image");
	rc = docker_build(dk, tar, tar_len, DEMO_IMAGE_LABEL, hash, id, err);
	free(tar);
	return rc < 0 ? al_wrap(err, "demo: cannot build the agent image") : 0;
}

int
demo_image_agent(const char *docker_host, const char *agent_path, char image[SNAP_IMAGE_MAX],
		 bool *built, struct al_err *err)
{
	char hash[HASH_HEX_LEN + 1], label[sizeof DEMO_IMAGE_LABEL + HASH_HEX_LEN + 2];
	char id[DOCKER_ID_MAX];
	unsigned char *agent;
	struct docker *dk;
	size_t len = 0;
	int rc;

	*built = false;
	if (!(dk = preflight_connect(docker_host, err)))
		return al_wrap(err, "demo");
	if (demo_read_agent(agent_path, &agent, &len, err) < 0) {
		docker_close(dk);
		return -1;
	}
	hash_sha256_hex(agent, len, hash);
	snprintf(label, sizeof label, "%s=%s", DEMO_IMAGE_LABEL, hash);
	rc = docker_image_by_label(dk, label, id, err);
	if (rc < 0)
		al_wrap(err, "demo: cannot look for the agent image");
	else if (rc == 1 && (rc = demo_build_image(dk, agent, len, hash, id, err)) == 0)
		*built = true;
	docker_close(dk);
	free(agent);
	if (rc < 0)
		return -1;
	snprintf(image, SNAP_IMAGE_MAX, "sha256:%s", id);
	return 0;
}

/* --- the MCP agent's image, by its script --------------------------------------- */

/* posix_spawn's argv is char *const[]; the strings are never written. */
static pid_t
demo_spawn_script(const char *script, const char *shim, int *out_fd)
{
	char *argv[] = { (char *)script, (char *)shim, NULL };
	posix_spawn_file_actions_t fa;
	int p[2], null_fd;
	pid_t pid = -1;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, null_fd, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_adddup2(&fa, null_fd, 2);	/* the console owns the tty */
	if (null_fd < 0 || posix_spawn(&pid, script, &fa, NULL, argv, environ) != 0)
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	if (null_fd >= 0)
		close(null_fd);
	close(p[1]);
	if (pid < 0)
		close(p[0]);
	*out_fd = p[0];
	return pid;
}

/* Its one line, within DEMO_IMAGE_SCRIPT_MS; the exit status, or -1 (killed when late). */
static int
demo_run_script(const char *script, const char *shim, char *line, size_t cap)
{
	int64_t end = clock_mono_ms() + DEMO_IMAGE_SCRIPT_MS;
	size_t n = 0;
	ssize_t r = 1;
	int fd, status;
	pid_t pid = demo_spawn_script(script, shim, &fd);

	if (pid < 0)
		return -1;
	while (r > 0 && n + 1 < cap && clock_mono_ms() < end) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };

		if (poll(&pf, 1, 1000) <= 0)
			continue;
		r = read(fd, line + n, cap - 1 - n);
		if (r > 0)
			n += (size_t)r;
	}
	line[n] = '\0';
	close(fd);
	if (clock_mono_ms() >= end)
		kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* "sha256:<64 hex> built|reused" into image and *built; false when it is not that. */
static bool
demo_take_image(const char *line, char image[SNAP_IMAGE_MAX], bool *built)
{
	size_t i;

	if (strncmp(line, "sha256:", 7) != 0)
		return false;
	for (i = 7; i < 7 + HASH_HEX_LEN; i++)
		if (!strchr("0123456789abcdef", line[i]) || !line[i])
			return false;
	if (strncmp(line + i, " built", 6) != 0 && strncmp(line + i, " reused", 7) != 0)
		return false;
	memcpy(image, line, i);
	image[i] = '\0';
	*built = line[i + 1] == 'b';
	return true;
}

int
demo_image_script(const char *script, const char *shim, char image[SNAP_IMAGE_MAX], bool *built)
{
	char line[256];
	int rc = demo_run_script(script, shim, line, sizeof line);

	image[0] = '\0';
	*built = false;
	if (rc == 0 && !demo_take_image(line, image, built))
		return -1;
	return rc;
}
