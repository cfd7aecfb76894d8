#include "config_check.h"

#include <stdio.h>
#include <string.h>

#include "mcp.h"
#include "parser.h"
#include "preflight.h"

int
config_check_image(struct docker *d, const struct profile *p, struct al_err *err)
{
	char path[128];
	json_t *img = NULL;
	long status = 0;
	const char *id;
	int rc;

	if (!profile_image_id_valid(p->image))
		return al_fail(err, "profile.image: required (an immutable local image ID sha256:<64 hex>)");
	snprintf(path, sizeof path, "/images/%s/json", p->image);
	rc = docker_request(d, "GET", path, NULL, &status, &img, err);
	if (rc < 0 && status == 404)
		return al_fail(err, "profile.image: %s is not on this host", p->image);
	if (rc < 0)
		return al_wrap(err, "profile.image: %s", p->image);
	id = json_string_value(json_object_get(img, "Id"));
	rc = id && strcmp(id, p->image) == 0 ? 0
	     : al_fail(err, "profile.image: %s: the daemon answers with another image", p->image);
	json_decref(img);
	return rc;
}

int
config_check_image_at(const char *docker_host, const struct profile *p, struct al_err *err)
{
	char sock[DOCKER_SOCKET_MAX];
	struct docker *d;
	int rc;

	if (!profile_image_id_valid(p->image))
		return config_check_image(NULL, p, err);
	if (preflight_endpoint(docker_host, sock, sizeof sock, err) < 0)
		return -2;
	d = docker_open(sock, DOCKER_TIMEOUT_MS, err);
	if (!d || docker_ping(d, err) < 0) {
		docker_close(d);
		return -2;
	}
	rc = config_check_image(d, p, err);
	docker_close(d);
	return rc;
}

static void
check_upstream(const struct airlock_config *c, size_t u, struct parser *p,
	       const struct al_err *parser_err, struct check_list *l)
{
	struct mcp_server_config sc;
	struct mcp_client *m = NULL;
	char id[80], h[HASH_HEX_LEN + 1];
	struct al_err err;
	size_t i;
	bool started = false;

	for (i = 0; i < c->n_tools; i++) {
		const struct catalog_tool *t = &c->tools[i];

		if (config_upstream_index(c, t->upstream) != (int)u)
			continue;
		if (!started) {
			config_upstream_mcp(c, u, &sc);
			sc.digest = parser_mcp_digest;	/* read there, as in a session */
			sc.digest_ctx = p;
			started = true;
			if (!p)
				err = *parser_err;
			else if (mcp_start(&sc, &m, &err) < 0)
				m = NULL;
		}
		snprintf(id, sizeof id, "%s.%s", host_check_id(HOST_CHECK_CATALOG), t->name);
		if (!m)
			check_add(l, id, false, t->remote, err.msg);
		else if (mcp_tool_hash(m, t->remote, h) < 0)
			check_addf(l, id, false, t->remote, "not among upstream %s's tools",
				   t->upstream);
		else if (t->pinned && strcmp(h, t->pin) != 0)
			/* Both hashes: the operator re-pins or finds out what changed. */
			check_addf(l, id, false, t->pin, "definition %s differs from tools.%s.pin",
				   h, t->name);
		else
			check_addf(l, id, true, t->remote, "listed by upstream %s, definition %s",
				   t->upstream, h);
	}
	mcp_stop(m);
}

void
config_check_catalog(const struct airlock_config *c, struct check_list *l)
{
	struct parser *p = NULL;
	struct al_err err = { "" };
	size_t u;

	if (c->n_upstreams)
		parser_start_beside(NULL, c->bounds.frame_bytes, &p, &err);
	for (u = 0; u < c->n_upstreams; u++)
		check_upstream(c, u, p, &err, l);
	parser_stop(p);
}
