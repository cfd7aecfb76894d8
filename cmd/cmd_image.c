/*
 * airlock image add-shim IMAGE: the image with the engine's own
 * airlock-shim added at /airlock/shim (docs/mcp-agents.md), built through
 * the Engine API from an in-memory context: no Dockerfile on the host.
 * IMAGE is an immutable ID or a local name, resolved to its ID first; the
 * build starts FROM that ID, so what was named is what gets the shim.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "docker.h"
#include "preflight.h"
#include "shim_image.h"

#define CMD	"image"

struct add_shim {
	const char *ref;		/* as given */
	char image[72];			/* its ID, "sha256:<64 hex>" */
	char shim_path[SHIM_PATH_MAX];
	char shim_hex[HASH_HEX_LEN + 1];
	char new_id[DOCKER_ID_MAX];
};

/* Refused (exit 1): the words go where cli_fail puts them. */
static int
refuse(bool json, const char *msg)
{
	cli_fail(json, CMD, "%s", msg);
	return EXIT_REFUSED;
}

/* IMAGE's immutable ID, from the daemon. 1 when it is refused, -1 on a fault. */
static int
resolve(struct docker *d, struct add_shim *a, struct al_err *err)
{
	json_t *img = NULL;
	const char *id;

	if (docker_image_inspect(d, a->ref, &img, err) < 0)
		return 1;
	id = json_string_value(json_object_get(img, "Id"));
	if (!id || strlen(id) >= sizeof a->image) {
		json_decref(img);
		al_fail(err, "docker: the image's inspect has no Id");
		return -1;
	}
	memcpy(a->image, id, strlen(id) + 1);
	json_decref(img);
	return 0;
}

static int
print_result(const struct add_shim *a, bool json)
{
	char new_image[72];
	json_t *out;
	int rc;

	snprintf(new_image, sizeof new_image, "sha256:%s", a->new_id);
	if (!json) {
		fprintf(stderr, "airlock image add-shim: %s is %s; /airlock/shim sha256:%s (%s)\n",
			a->ref, a->image, a->shim_hex, a->shim_path);
		printf("%s\n", new_image);
		return fflush(stdout) == 0 ? EXIT_OK : EXIT_ERROR;
	}
	out = json_pack("{s:b, s:s, s:s, s:s, s:s, s:s}", "ok", 1, "input", a->ref,
			"image", a->image, "new_image", new_image,
			"shim_sha256", a->shim_hex, "shim", a->shim_path);
	rc = cli_print_json(out);
	json_decref(out);
	return rc;
}

static int
add_shim(struct add_shim *a, bool json)
{
	struct docker *d = NULL;
	unsigned char *shim = NULL;
	struct al_err err;
	size_t len = 0;
	int rc, r;

	if (shim_image_locate(NULL, a->shim_path, sizeof a->shim_path, &err) < 0 ||
	    shim_image_read(a->shim_path, &shim, &len, a->shim_hex, &err) < 0)
		return cli_fail(json, CMD, "%s", err.msg);
	if (!(d = preflight_connect(getenv("DOCKER_HOST"), &err)) || docker_ping(d, &err) < 0) {
		rc = cli_fail(json, CMD, "%s", err.msg);
	} else if ((r = resolve(d, a, &err)) != 0) {
		rc = r > 0 ? refuse(json, err.msg) : cli_fail(json, CMD, "%s", err.msg);
	} else if (shim_image_add(d, a->image, shim, len, a->new_id, &err) < 0) {
		rc = refuse(json, err.msg);
	} else {
		rc = print_result(a, json);
	}
	free(shim);
	docker_close(d);
	return rc;
}

int
cmd_image(int argc, char **argv)
{
	struct add_shim a = { 0 };
	struct cli_opts o;
	int rc = cli_parse(CMD, argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (o.n_positional != 2 || strcmp(o.positional[0], "add-shim") != 0)
		return cli_usage_error(CMD, "expected 'add-shim IMAGE'");
	a.ref = o.positional[1];
	if (!docker_image_ref_valid(a.ref))
		return cli_usage_error(CMD, "IMAGE must be an image ID (sha256:<64 hex>) or a "
				       "local name[:tag]");
	return add_shim(&a, o.json);
}
