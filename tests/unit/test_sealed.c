/*
 * Sealed material, Docker-free: the config key, the permission rules over
 * layers (engine/admission/sealed.h), the tar stream parser and the export reader
 * (engine/sandbox/sealed_image.h) fed with archives built here, byte by byte.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "hash.h"
#include "sealed.h"
#include "sealed_image.h"
#include "shim_image.h"
#include "tar_stream.h"

#define AGENT_UID	10001
#define AGENT_GID	10001

/* --- building layers --------------------------------------------------- */

#define LAYERS_MAX 4

struct image {
	struct sealed_layer layers[LAYERS_MAX];
	size_t n;
	struct strv sealed;
	size_t budget;
};

static void
image_init(struct image *im, const char *const *sealed)
{
	memset(im, 0, sizeof *im);
	im->budget = SEALED_ENTRIES_MAX;
	for (; *sealed; sealed++)
		assert_int_equal(strv_push(&im->sealed, *sealed), 0);
}

static void
image_free(struct image *im)
{
	size_t i;

	for (i = 0; i < LAYERS_MAX; i++)
		sealed_layer_free(&im->layers[i]);
	strv_free(&im->sealed);
}

static void
layer(struct image *im)
{
	assert_true(im->n < LAYERS_MAX);
	im->n++;
}

/* One entry into the top layer: type, path, mode, uid, gid [, link]. */
static void
put(struct image *im, char type, const char *path, unsigned mode, uint64_t uid, uint64_t gid,
    const char *link)
{
	struct tar_entry e = { .type = type, .mode = mode, .uid = uid, .gid = gid };
	struct al_err err;

	snprintf(e.path, sizeof e.path, "%s", path);
	snprintf(e.link, sizeof e.link, "%s", link ? link : "");
	assert_int_equal(sealed_layer_add(&im->layers[im->n - 1], &e, &im->sealed, &im->budget,
					  &err), 0);
}

#define DIR(im, p, m, u, g)	put(im, '5', p, m, u, g, NULL)
#define FILE_(im, p, m, u, g)	put(im, '0', p, m, u, g, NULL)

static struct sealed_verdict
judge_groups(struct image *im, const uint64_t *extra, size_t n_extra)
{
	const struct sealed_layer *order[LAYERS_MAX];
	struct sealed_who who = { .uid = AGENT_UID, .gids = { AGENT_GID }, .n_gids = 1 };
	struct sealed_verdict v;
	size_t i;

	for (i = 0; i < n_extra; i++)
		who.gids[who.n_gids++] = extra[i];
	for (i = 0; i < im->n; i++)
		order[i] = &im->layers[i];
	memset(&v, 0, sizeof v);
	sealed_judge(order, im->n, &im->sealed, &who, &v);
	return v;
}

static struct sealed_verdict
judge(struct image *im)
{
	return judge_groups(im, NULL, 0);
}

static void
assert_pass(struct image *im)
{
	struct sealed_verdict v = judge(im);

	if (!v.pass)
		fprintf(stderr, "unexpected refusal: %s\n", v.text);
	assert_true(v.pass);
	assert_non_null(strstr(v.text, "none readable"));
}

/* Refused, and the text names the path and the reason. */
static void
assert_refused(struct image *im, const char *path, const char *reason)
{
	struct sealed_verdict v = judge(im);

	if (v.pass || !strstr(v.text, reason))
		fprintf(stderr, "verdict: %s: %s\n", v.pass ? "pass" : "refused", v.text);
	assert_false(v.pass);
	assert_true(strncmp(v.text, path, strlen(path)) == 0);
	assert_non_null(strstr(v.text, reason));
}

/* A usual base layer: / and /srv 0755 root. */
static void
base(struct image *im, const char *const *sealed)
{
	image_init(im, sealed);
	layer(im);
	DIR(im, "./", 0755, 0, 0);
	DIR(im, "srv/", 0755, 0, 0);
}

static const char *const key[] = { "/srv/key", NULL };
static const char *const dir[] = { "/srv/vault", NULL };

/*
 * An image as a table and the verdict on it. The entries go on top of
 * base()'s layer (/ and /srv, 0755 root), or into a first layer of their
 * own when bare; each is put()'s arguments, and E_LAYER starts the next
 * layer. Without path the image passes; with it, it is refused naming
 * path and reason. unseen, if set, is a name the verdict must never show.
 */
struct image_case {
	const char *const *sealed;
	bool bare;
	struct put_args {
		char type;
		const char *path;
		unsigned mode;
		uint64_t uid, gid;
		const char *link;
	} ents[8];
	const char *path, *reason, *unseen;
};

#define E_DIR(p, m, u, g)	{ '5', p, m, u, g, NULL }
#define E_FILE(p, m, u, g)	{ '0', p, m, u, g, NULL }
#define E_SYMLINK(p, to)	{ '2', p, 0777, 0, 0, to }
#define E_HARDLINK(p, to)	{ '1', p, 0644, 0, 0, to }
#define E_LAYER			{ 'L', NULL, 0, 0, 0, NULL }

#define N_OF(a) (sizeof (a) / sizeof (a)[0])

static void
build(struct image *im, const struct image_case *c)
{
	const struct put_args *e;

	if (c->bare) {
		image_init(im, c->sealed);
		layer(im);
	} else {
		base(im, c->sealed);
	}
	for (e = c->ents; e->type; e++) {
		assert_true(e < c->ents + N_OF(c->ents) - 1);
		if (e->type == 'L')
			layer(im);
		else
			put(im, e->type, e->path, e->mode, e->uid, e->gid, e->link);
	}
}

static void
assert_images(const struct image_case *c, size_t n)
{
	struct sealed_verdict v;
	struct image im;
	size_t i;

	for (i = 0; i < n; i++) {
		build(&im, &c[i]);
		v = judge(&im);
		if (v.pass != !c[i].path)
			fprintf(stderr, "case %zu of %zu\n", i, n);
		if (c[i].path)
			assert_refused(&im, c[i].path, c[i].reason);
		else
			assert_pass(&im);
		if (c[i].unseen)
			assert_null(strstr(v.text, c[i].unseen));
		image_free(&im);
	}
}

/* --- owner, group and other bits -------------------------------------- */

static void
test_root_0600_passes(void **state)
{
	static const struct image_case c[] = {
		{ .sealed = key, .ents = { E_FILE("srv/key", 0600, 0, 0) } },
	};

	(void)state;
	assert_images(c, N_OF(c));
}

static void
test_root_0644_refused(void **state)
{
	static const struct image_case c[] = {
		{ .sealed = key, .ents = { E_FILE("srv/key", 0644, 0, 0) },
		  .path = "/srv/key", .reason = "readable by 10001:10001 (mode 0644, owner 0:0)" },
	};

	(void)state;
	assert_images(c, N_OF(c));
}

/* The group bits apply to the primary gid and to supplementary groups only. */
static void
test_group_bits(void **state)
{
	static const uint64_t extra[] = { 5000 };
	struct image im;

	(void)state;
	base(&im, key);
	FILE_(&im, "srv/key", 0640, 0, 5000);
	assert_pass(&im);
	assert_false(judge_groups(&im, extra, 1).pass);
	image_free(&im);

	base(&im, key);
	FILE_(&im, "srv/key", 0640, 0, AGENT_GID);
	assert_refused(&im, "/srv/key", "readable");
	image_free(&im);
}

/* One class applies: a group member gets the group's bits, not other's. */
static void
test_group_excludes_other(void **state)
{
	static const struct image_case c[] = {
		{ .sealed = key, .ents = { E_FILE("srv/key", 0604, 0, AGENT_GID) } },
		{ .sealed = key, .ents = { E_FILE("srv/key", 0604, 0, 5000) },
		  .path = "/srv/key", .reason = "mode 0604" },
	};

	(void)state;
	assert_images(c, N_OF(c));
}

/* The agent's own file is refused whatever its mode: its owner may chmod it. */
static void
test_owned_by_agent_refused(void **state)
{
	static const struct image_case c[] = {
		{ .sealed = key, .ents = { E_FILE("srv/key", 0000, AGENT_UID, 0) },
		  .path = "/srv/key", .reason = "owned by the agent's uid 10001" },
	};

	(void)state;
	assert_images(c, N_OF(c));
}

/* --- parent search bits ----------------------------------------------- */

static void
test_parent_without_search_protects(void **state)
{
	static const char *const deep[] = { "/srv/locked/key", NULL };
	static const struct image_case c[] = {
		{ .sealed = deep, .ents = {
			E_DIR("srv/locked", 0700, 0, 0),
			E_FILE("srv/locked/key", 0644, 0, 0) } },
		/* Search alone (no read) lets the agent reach a name it knows. */
		{ .sealed = deep, .ents = {
			E_DIR("srv/locked", 0711, 0, 0),
			E_FILE("srv/locked/key", 0644, 0, 0) },
		  .path = "/srv/locked/key", .reason = "readable" },
		/* Group search through the agent's gid. */
		{ .sealed = deep, .ents = {
			E_DIR("srv/locked", 0750, 0, AGENT_GID),
			E_FILE("srv/locked/key", 0644, 0, 0) },
		  .path = "/srv/locked/key", .reason = "readable" },
	};

	(void)state;
	assert_images(c, N_OF(c));
}

/* A directory the image leaves out is made 0755 root by the daemon. */
static void
test_missing_parent_is_searchable(void **state)
{
	static const char *const deep[] = { "/opt/x/key", NULL };
	static const struct image_case c[] = {
		{ .sealed = deep, .bare = true, .ents = { E_FILE("opt/x/key", 0644, 0, 0) },
		  .path = "/opt/x/key", .reason = "readable" },
	};

	(void)state;
	assert_images(c, N_OF(c));
}

/* /etc is Docker's init layer's (0755 root): the image's 0700 protects nothing. */
static void
test_init_layer_dirs(void **state)
{
	static const char *const etc[] = { "/etc/key", NULL };
	static const char *const etc_dir[] = { "/etc", NULL };
	static const struct image_case c[] = {
		{ .sealed = etc, .bare = true, .ents = {
			E_DIR("etc", 0700, 0, 0),
			E_FILE("etc/key", 0644, 0, 0) },
		  .path = "/etc/key", .reason = "readable" },
		{ .sealed = etc_dir, .bare = true, .ents = { E_DIR("etc", 0700, 0, 0) },
		  .path = "/etc", .reason = "init layer" },
	};

	(void)state;
	assert_images(c, N_OF(c));
}

/* --- directories, recursively ------------------------------------------ */

static void
test_dir_0700_passes(void **state)
{
	static const struct image_case c[] = {
		{ .sealed = dir, .ents = {
			E_DIR("srv/vault", 0700, 0, 0),
			E_DIR("srv/vault/sub", 0755, 0, 0),
			E_FILE("srv/vault/sub/a", 0644, 0, 0) } },
	};

	(void)state;
	assert_images(c, N_OF(c));
}

static void
test_dir_listable_refused(void **state)
{
	static const struct image_case c[] = {
		{ .sealed = dir, .ents = {
			E_DIR("srv/vault", 0755, 0, 0),
			E_FILE("srv/vault/a", 0600, 0, 0) },
		  .path = "/srv/vault", .reason = "readable by 10001:10001 (mode 0755" },
	};

	(void)state;
	assert_images(c, N_OF(c));
}

/* Search-only directories: each entry below is judged through the ones between. */
static void
test_dir_entries_below(void **state)
{
	static const struct image_case c[] = {
		{ .sealed = dir, .ents = {
			E_DIR("srv/vault", 0711, 0, 0),
			E_FILE("srv/vault/a", 0600, 0, 0),
			E_DIR("srv/vault/sub", 0700, 0, 0),
			E_FILE("srv/vault/sub/b", 0644, 0, 0) } },
		{ .sealed = dir, .ents = {
			E_DIR("srv/vault", 0711, 0, 0),
			E_DIR("srv/vault/sub", 0711, 0, 0),
			E_FILE("srv/vault/sub/customer-acme.pem", 0644, 0, 0) },
		  .path = "/srv/vault", .reason = "an entry 2 levels below, readable",
		  .unseen = "customer-acme" },	/* names below are never shown */
	};

	(void)state;
	assert_images(c, N_OF(c));
}

/* --- whiteouts, opaque directories, replacement across layers ----------- */

static void
test_whiteout_removes_lower(void **state)
{
	static const struct image_case c[] = {
		{ .sealed = dir, .ents = {
			E_DIR("srv/vault", 0711, 0, 0),
			E_FILE("srv/vault/old", 0644, 0, 0),
			E_LAYER,
			E_FILE("srv/vault/.wh.old", 0644, 0, 0) } },
		/* The control: without the whiteout the lower file is what the agent reads. */
		{ .sealed = dir, .ents = {
			E_DIR("srv/vault", 0711, 0, 0),
			E_FILE("srv/vault/old", 0644, 0, 0),
			E_LAYER,
			E_FILE("srv/vault/new", 0600, 0, 0) },
		  .path = "/srv/vault", .reason = "an entry 1 level below, readable" },
	};

	(void)state;
	assert_images(c, N_OF(c));
}

static void
test_whiteout_of_sealed_path(void **state)
{
	static const struct image_case c[] = {
		{ .sealed = key, .ents = {
			E_FILE("srv/key", 0600, 0, 0),
			E_LAYER,
			E_FILE("srv/.wh.key", 0, 0, 0) },
		  .path = "/srv/key", .reason = "not in the image" },
	};

	(void)state;
	assert_images(c, N_OF(c));
}

/* A whited-out directory takes its whole subtree along. */
static void
test_whiteout_of_directory(void **state)
{
	static const struct image_case c[] = {
		{ .sealed = dir, .ents = {
			E_DIR("srv/vault", 0711, 0, 0),
			E_FILE("srv/vault/a", 0644, 0, 0),
			E_LAYER,
			E_FILE("srv/.wh.vault", 0, 0, 0),
			E_DIR("srv/vault", 0711, 0, 0),
			E_FILE("srv/vault/b", 0600, 0, 0) } },
	};

	(void)state;
	assert_images(c, N_OF(c));
}

static void
test_opaque_directory(void **state)
{
	static const struct image_case c[] = {
		{ .sealed = dir, .ents = {
			E_DIR("srv/vault", 0711, 0, 0),
			E_FILE("srv/vault/a", 0644, 0, 0),
			E_LAYER,
			E_DIR("srv/vault", 0711, 0, 0),
			E_FILE("srv/vault/.wh..wh..opq", 0, 0, 0),
			E_FILE("srv/vault/b", 0600, 0, 0) } },
	};

	(void)state;
	assert_images(c, N_OF(c));
}

/* The upper layer's mode wins, both ways. */
static void
test_upper_layer_wins(void **state)
{
	static const struct image_case c[] = {
		{ .sealed = key, .ents = {
			E_FILE("srv/key", 0600, 0, 0),
			E_LAYER,
			E_FILE("srv/key", 0644, 0, 0) },
		  .path = "/srv/key", .reason = "readable" },
		{ .sealed = key, .ents = {
			E_FILE("srv/key", 0644, 0, 0),
			E_LAYER,
			E_FILE("srv/key", 0600, 0, 0) } },
		/* Within one layer the later entry wins, as on extraction. */
		{ .sealed = key, .ents = {
			E_FILE("srv/key", 0600, 0, 0),
			E_FILE("srv/key", 0604, 0, 0) },
		  .path = "/srv/key", .reason = "readable" },
	};

	(void)state;
	assert_images(c, N_OF(c));
}

/* A file over a lower directory hides everything the directory held. */
static void
test_file_replaces_directory(void **state)
{
	static const struct image_case c[] = {
		{ .sealed = dir, .ents = {
			E_DIR("srv/vault", 0711, 0, 0),
			E_FILE("srv/vault/a", 0644, 0, 0),
			E_LAYER,
			E_FILE("srv/vault", 0600, 0, 0) } },
	};

	(void)state;
	assert_images(c, N_OF(c));
}

/* --- symlinks, hard links, ACLs ---------------------------------------- */

static void
test_symlinks(void **state)
{
	static const char *const via[] = { "/srv/link/key", NULL };
	static const struct image_case c[] = {
		{ .sealed = key, .ents = { E_SYMLINK("srv/key", "/elsewhere") },
		  .path = "/srv/key", .reason = "is a symlink" },
		{ .sealed = via, .ents = { E_SYMLINK("srv/link", "/real") },
		  .path = "/srv/link/key", .reason = "parent directory is a symlink" },
		{ .sealed = dir, .ents = {
			E_DIR("srv/vault", 0711, 0, 0),
			E_SYMLINK("srv/vault/l", "/etc/passwd") },
		  .path = "/srv/vault", .reason = "a symlink, readable" },
		/* Unreachable: nothing to read. */
		{ .sealed = dir, .ents = {
			E_DIR("srv/vault", 0700, 0, 0),
			E_SYMLINK("srv/vault/l", "/etc/passwd") } },
	};

	(void)state;
	assert_images(c, N_OF(c));
}

static void
test_hard_link_across_boundary(void **state)
{
	static const struct image_case c[] = {
		{ .sealed = dir, .ents = {
			E_DIR("srv/vault", 0700, 0, 0),
			E_FILE("srv/vault/a", 0644, 0, 0),
			E_DIR("pub", 0755, 0, 0),
			E_HARDLINK("pub/copy", "srv/vault/a") },
		  .path = "/srv/vault", .reason = "hard link" },
	};

	(void)state;
	assert_images(c, N_OF(c));
}

static void
test_acl_refused(void **state)
{
	struct tar_entry e = { .type = '0', .mode = 0600, .acl = true };
	struct image im;
	struct al_err err;

	(void)state;
	base(&im, key);
	snprintf(e.path, sizeof e.path, "srv/key");
	assert_int_equal(sealed_layer_add(&im.layers[0], &e, &im.sealed, &im.budget, &err), 0);
	assert_refused(&im, "/srv/key", "POSIX ACL");
	image_free(&im);
}

static void
test_not_in_image(void **state)
{
	static const struct image_case c[] = {
		{ .sealed = key, .path = "/srv/key", .reason = "not in the image" },
	};

	(void)state;
	assert_images(c, N_OF(c));
}

/* Only what bears on a sealed path is kept. */
static void
test_irrelevant_entries_dropped(void **state)
{
	struct image im;

	(void)state;
	base(&im, key);
	FILE_(&im, "srv/other", 0644, 0, 0);
	FILE_(&im, "usr/bin/tool", 0755, 0, 0);
	FILE_(&im, "srv/key", 0600, 0, 0);
	assert_int_equal(im.layers[0].n, 3);	/* ".", "srv", "srv/key" */
	image_free(&im);
}

static void
test_dotdot_entry_refused(void **state)
{
	struct tar_entry e = { .type = '0', .mode = 0600 };
	struct image im;
	struct al_err err;

	(void)state;
	base(&im, key);
	snprintf(e.path, sizeof e.path, "srv/../srv/key");
	assert_int_equal(sealed_layer_add(&im.layers[0], &e, &im.sealed, &im.budget, &err), -1);
	assert_non_null(strstr(err.msg, ".."));
	image_free(&im);
}

/*
 * Docker's unpacker hands a tar's uid to chown, which keeps the low 32
 * bits: 2^32 + the agent's uid would own the file as the agent while the
 * export still says otherwise. Such an id is refused where it matters.
 */
static void
test_id_past_32_bits_refused(void **state)
{
	static const uint64_t ids[] = { (1ULL << 32) + AGENT_UID, 0xffffffffULL };
	struct tar_entry e = { .type = '0', .mode = 0600 };
	struct image im;
	struct al_err err;
	size_t i;

	(void)state;
	for (i = 0; i < 2 * (sizeof ids / sizeof ids[0]); i++) {
		base(&im, key);
		snprintf(e.path, sizeof e.path, "srv/key");
		e.uid = i % 2 ? 0 : ids[i / 2];
		e.gid = i % 2 ? ids[i / 2] : 0;
		err.msg[0] = '\0';
		assert_int_equal(sealed_layer_add(&im.layers[0], &e, &im.sealed, &im.budget, &err), -1);
		assert_non_null(strstr(err.msg, "32 bits"));
		image_free(&im);
	}
	/* Where it bears on no sealed path, it is not kept and not judged. */
	base(&im, key);
	snprintf(e.path, sizeof e.path, "usr/bin/tool");
	e.uid = ids[0];
	assert_int_equal(sealed_layer_add(&im.layers[0], &e, &im.sealed, &im.budget, &err), 0);
	image_free(&im);
}

/* --- who --------------------------------------------------------------- */

static void
test_who(void **state)
{
	json_t *groups = json_pack("[s, s]", "5000", "6000");
	json_t *named = json_pack("[s]", "wheel");
	struct sealed_who w;
	struct al_err err;

	(void)state;
	assert_int_equal(sealed_who_parse("10001:10002", groups, &w, &err), 0);
	assert_int_equal(w.uid, 10001);
	assert_int_equal(w.n_gids, 3);
	assert_int_equal(w.gids[0], 10002);
	assert_int_equal(w.gids[2], 6000);
	assert_int_equal(sealed_who_parse("10001:10001", json_null(), &w, &err), 0);
	assert_int_equal(w.n_gids, 1);
	assert_int_equal(sealed_who_parse("10001:10001", named, &w, &err), -1);
	assert_non_null(strstr(err.msg, "not numeric"));
	assert_int_equal(sealed_who_parse("10001", json_null(), &w, &err), -1);
	assert_int_equal(sealed_who_parse("4294967296:1", json_null(), &w, &err), -1);
	assert_int_equal(sealed_who_parse(NULL, json_null(), &w, &err), -1);
	json_decref(groups);
	json_decref(named);
}

/* --- profile.sealed ---------------------------------------------------- */

static int
parse_one(const char *path, struct al_err *err)
{
	json_t *v = json_pack("[s]", path);
	struct strv sv = { 0 };
	int rc = sealed_paths_parse(&sv, v, err);

	json_decref(v);
	strv_free(&sv);
	return rc;
}

static void
test_config_paths(void **state)
{
	static const char *const bad[] = {
		"secrets", "/", "/secrets/", "//secrets", "/a//b", "/a/./b", "/a/../b", "/a/..",
		"/a/.", "/proc/self/environ", "/sys", "/dev/shm/x", "/etc/hosts",
		"/etc/resolv.conf", "/.dockerenv", "/a b", "/a\\b", "/caf\xc3\xa9",
	};
	char longp[300];
	struct al_err err;
	size_t i;

	(void)state;
	assert_int_equal(parse_one("/secrets", &err), 0);
	assert_int_equal(parse_one("/etc/ssl/private/key.pem", &err), 0);
	assert_int_equal(parse_one("/srv/.hidden", &err), 0);
	assert_int_equal(parse_one("/devices", &err), 0);	/* not under /dev */
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err.msg[0] = '\0';
		if (parse_one(bad[i], &err) != -1)
			fail_msg("accepted %s", bad[i]);
		assert_true(strncmp(err.msg, "profile.sealed[0]: ", 19) == 0);
	}
	memset(longp, 'a', sizeof longp);
	longp[0] = '/';
	longp[sizeof longp - 1] = '\0';
	assert_int_equal(parse_one(longp, &err), -1);
	assert_non_null(strstr(err.msg, "longer than 255"));
}

static void
test_config_shape(void **state)
{
	json_t *many = json_array(), *dup = json_pack("[s, s]", "/a", "/a");
	json_t *notstr = json_pack("[i]", 1), *obj = json_object();
	struct strv sv = { 0 };
	struct al_err err;
	char p[16];
	int i;

	(void)state;
	for (i = 0; i <= SEALED_PATHS_MAX; i++) {
		snprintf(p, sizeof p, "/p%d", i);
		json_array_append_new(many, json_string(p));
	}
	assert_int_equal(sealed_paths_parse(&sv, many, &err), -1);
	assert_non_null(strstr(err.msg, "profile.sealed: expected an array of at most 16"));
	assert_int_equal(sealed_paths_parse(&sv, dup, &err), -1);
	assert_non_null(strstr(err.msg, "profile.sealed[1]: listed twice"));
	assert_int_equal(sealed_paths_parse(&sv, notstr, &err), -1);
	assert_non_null(strstr(err.msg, "profile.sealed[0]: expected a string"));
	assert_int_equal(sealed_paths_parse(&sv, obj, &err), -1);
	strv_free(&sv);
	json_decref(many);
	json_decref(dup);
	json_decref(notstr);
	json_decref(obj);
}

/* The key reaches the profile through profile_apply_json, errors named. */
static void
test_config_through_profile(void **state)
{
	json_t *good = json_pack("{s:[s, s]}", "sealed", "/srv/keys", "/etc/ssl/private");
	json_t *bad = json_pack("{s:[s]}", "sealed", "srv/keys");
	struct profile p;
	struct al_err err;

	(void)state;
	profile_defaults(&p);
	assert_int_equal(profile_apply_json(&p, good, 2, &err), 0);
	assert_int_equal(p.sealed.n, 2);
	assert_string_equal(p.sealed.v[1], "/etc/ssl/private");
	assert_int_equal(profile_apply_json(&p, bad, 2, &err), -1);
	assert_true(strncmp(err.msg, "profile.sealed[0]: not an absolute", 34) == 0);
	profile_free(&p);
	assert_int_equal(p.sealed.n, 0);
	json_decref(good);
	json_decref(bad);
}

/* --- tar archives, built here ------------------------------------------ */

struct tarbuf {
	unsigned char *p;
	size_t len, cap;
};

static void
tb_grow(struct tarbuf *t, size_t n)
{
	while (t->len + n > t->cap) {
		t->cap = t->cap ? t->cap * 2 : 8192;
		t->p = realloc(t->p, t->cap);
		assert_non_null(t->p);
	}
}

static void
tb_bytes(struct tarbuf *t, const void *p, size_t n)
{
	size_t pad = (512 - n % 512) % 512;

	tb_grow(t, n + pad);
	memcpy(t->p + t->len, p, n);
	memset(t->p + t->len + n, 0, pad);
	t->len += n + pad;
}

static void
octal(unsigned char *f, size_t w, uint64_t v)
{
	char tmp[32];

	snprintf(tmp, sizeof tmp, "%0*llo", (int)(w - 1), (unsigned long long)v);
	memcpy(f, tmp, w - 1);
}

static void
tb_header(struct tarbuf *t, char type, const char *name, unsigned mode, uint64_t uid,
	  uint64_t gid, size_t size, const char *link)
{
	unsigned char h[512] = { 0 };
	unsigned sum = 0;
	size_t i;

	memcpy(h, name, strlen(name) < 100 ? strlen(name) : 100);
	octal(h + 100, 8, mode);
	octal(h + 108, 8, uid);
	octal(h + 116, 8, gid);
	octal(h + 124, 12, size);
	octal(h + 136, 12, 0);
	h[156] = (unsigned char)type;
	if (link)
		memcpy(h + 157, link, strlen(link));
	memcpy(h + 257, "ustar\0" "00", 8);
	memset(h + 148, ' ', 8);
	for (i = 0; i < 512; i++)
		sum += h[i];
	octal(h + 148, 7, sum);
	tb_bytes(t, h, 512);
}

static void
tb_file(struct tarbuf *t, const char *name, unsigned mode, uint64_t uid, uint64_t gid,
	const void *data, size_t len)
{
	tb_header(t, '0', name, mode, uid, gid, len, NULL);
	if (len)
		tb_bytes(t, data, len);
}

/* One PAX header ahead of the next entry with n records kv[0]=kv[1], kv[2]=kv[3], … */
static void
tb_pax_records(struct tarbuf *t, const char *const *kv, size_t n)
{
	char rec[10000];
	size_t i, off = 0;
	int k, len;

	for (i = 0; i < n; i++) {
		k = (int)(strlen(kv[2 * i]) + strlen(kv[2 * i + 1]) + 3);
		/* The length counts its own digits. */
		for (len = k; snprintf(NULL, 0, "%d", len) + k != len;)
			len = snprintf(NULL, 0, "%d", len) + k;
		off += (size_t)snprintf(rec + off, sizeof rec - off, "%d %s=%s\n", len, kv[2 * i],
					kv[2 * i + 1]);
	}
	tb_header(t, 'x', "PaxHeaders/x", 0644, 0, 0, off, NULL);
	tb_bytes(t, rec, off);
}

/* A PAX header of one record ahead of the next entry. */
static void
tb_pax(struct tarbuf *t, const char *key, const char *value)
{
	const char *kv[] = { key, value };

	tb_pax_records(t, kv, 1);
}

static void
tb_end(struct tarbuf *t)
{
	static const unsigned char zero[1024];

	tb_grow(t, sizeof zero);
	memcpy(t->p + t->len, zero, sizeof zero);
	t->len += sizeof zero;
}

/* Parse back through tar_stream, fed n bytes at a time. */
struct seen {
	struct tar_entry e[8];
	size_t n, data;
	int ends;
};

static int
seen_entry(void *ctx, const struct tar_entry *e)
{
	struct seen *s = ctx;

	if (s->n < 8)
		s->e[s->n] = *e;
	s->n++;
	return 0;
}

static int
seen_data(void *ctx, const unsigned char *p, size_t n)
{
	(void)p;
	((struct seen *)ctx)->data += n;
	return 0;
}

static int
seen_end(void *ctx)
{
	((struct seen *)ctx)->ends++;
	return 0;
}

static const struct tar_stream_ops seen_ops = { seen_entry, seen_data, seen_end };

static int
parse_chunks(const struct tarbuf *t, size_t step, struct seen *s, struct al_err *err)
{
	struct tar_stream ts;
	size_t off, k;
	int rc = 0;

	memset(s, 0, sizeof *s);
	assert_int_equal(tar_stream_init(&ts, &seen_ops, s, err), 0);
	for (off = 0; off < t->len && rc == 0; off += k) {
		k = t->len - off < step ? t->len - off : step;
		rc = tar_stream_feed(&ts, t->p + off, k);
	}
	if (rc == 0 && !tar_stream_done(&ts))
		rc = 1;
	tar_stream_free(&ts);
	return rc;
}

/* Refused when fed step bytes at a time, the error naming msg; t is freed and emptied. */
static void
assert_tar_refused(struct tarbuf *t, size_t step, const char *msg)
{
	struct seen s;
	struct al_err err;

	err.msg[0] = '\0';
	assert_int_equal(parse_chunks(t, step, &s, &err), -1);
	if (!strstr(err.msg, msg))
		fail_msg("want \"%s\", got \"%s\"", msg, err.msg);
	free(t->p);
	memset(t, 0, sizeof *t);
}

static void
test_tar_stream_fields(void **state)
{
	static const size_t steps[] = { 1, 7, 512, 100000 };
	const char *pax[] = { "path", NULL, "uid", "4294967296" };
	char longname[300];
	struct tarbuf t = { 0 };
	struct seen s;
	struct al_err err;
	size_t i;

	(void)state;
	memset(longname, 'n', sizeof longname);
	memcpy(longname, "deep/", 5);
	longname[sizeof longname - 1] = '\0';
	tb_header(&t, '5', "srv/", 0711, 0, 0, 0, NULL);
	tb_file(&t, "srv/key", 0640, 0, 5000, "CANARY", 6);
	pax[1] = longname;
	tb_pax_records(&t, pax, 2);
	tb_file(&t, "short", 0600, 0, 0, "x", 1);
	tb_header(&t, 'L', "././@LongLink", 0, 0, 0, strlen(longname) + 1, NULL);
	tb_bytes(&t, longname, strlen(longname) + 1);
	tb_header(&t, '2', "ignored", 0777, 0, 0, 0, "target");
	tb_pax(&t, "SCHILY.xattr.system.posix_acl_access", "x");
	tb_file(&t, "acl", 0600, 0, 0, NULL, 0);
	tb_end(&t);
	for (i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		assert_int_equal(parse_chunks(&t, steps[i], &s, &err), 0);
		assert_int_equal(s.n, 5);
		assert_int_equal(s.ends, 5);
		assert_int_equal(s.data, 7);
		assert_int_equal(s.e[0].type, '5');
		assert_int_equal(s.e[0].mode, 0711);
		assert_string_equal(s.e[1].path, "srv/key");
		assert_int_equal(s.e[1].gid, 5000);
		assert_string_equal(s.e[2].path, longname);
		assert_true(s.e[2].uid == 4294967296ULL);
		assert_string_equal(s.e[3].path, longname);
		assert_string_equal(s.e[3].link, "target");
		assert_false(s.e[3].acl);
		assert_true(s.e[4].acl);
		assert_int_equal(s.e[4].xattrs, TAR_XATTR_ACL);
		assert_false(s.e[2].acl);
		assert_int_equal(s.e[2].xattrs, 0);
	}
	free(t.p);
}

static void
test_tar_stream_faults(void **state)
{
	struct tarbuf t = { 0 };
	struct seen s;
	struct al_err err;

	(void)state;
	tb_file(&t, "a", 0600, 0, 0, "abc", 3);
	t.p[148] ^= 1;		/* checksum */
	tb_end(&t);
	assert_tar_refused(&t, 512, "checksum");

	tb_file(&t, "a", 0600, 0, 0, "abcdef", 6);
	t.len -= 200;		/* cut before the end block: never done */
	assert_int_equal(parse_chunks(&t, 512, &s, &err), 1);
	free(t.p);

	memset(&t, 0, sizeof t);
	tb_header(&t, 'x', "PaxHeaders/x", 0644, 0, 0, 9, NULL);
	tb_bytes(&t, "99 path=x", 9);	/* the length lies */
	tb_file(&t, "a", 0600, 0, 0, NULL, 0);
	tb_end(&t);
	assert_tar_refused(&t, 3, "PAX");
}

/*
 * Where readers of one archive could disagree, the parser reads it as
 * Docker's unpacker (Go's archive/tar) does, or refuses: a differing
 * reading would judge one file tree while the container gets another.
 */

/* Rewrite the checksum of the header at off after editing it. */
static void
tb_resum(struct tarbuf *t, size_t off)
{
	unsigned char *h = t->p + off;
	unsigned sum = 0;
	size_t i;

	memset(h + 148, ' ', 8);
	for (i = 0; i < 512; i++)
		sum += h[i];
	octal(h + 148, 7, sum);
}

/* The header type of block-aligned entry names, in order, as parsed. */
static void
assert_paths(const struct tarbuf *t, const char *const *want, size_t n)
{
	static const size_t steps[] = { 1, 512, 100000 };
	struct seen s;
	struct al_err err;
	size_t i, k;

	for (k = 0; k < sizeof steps / sizeof steps[0]; k++) {
		err.msg[0] = '\0';
		if (parse_chunks(t, steps[k], &s, &err) != 0)
			fail_msg("step %zu: %s", steps[k], err.msg);
		assert_int_equal(s.n, n);
		for (i = 0; i < n && i < 8; i++)
			assert_string_equal(s.e[i].path, want[i]);
	}
}

/* Links, devices, directories and fifos have no data, whatever their size says. */
static void
test_tar_header_only_types(void **state)
{
	static const char types[] = { '1', '2', '3', '4', '5', '6' };
	static const char *const want[] = { "srv/vault", "srv/vault/key" };
	struct tarbuf t;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof types; i++) {
		memset(&t, 0, sizeof t);
		tb_header(&t, types[i], "srv/vault", 0700, 0, 0, 1024, "x");
		tb_file(&t, "srv/vault/key", 0644, 0, 0, "CANARY", 6);
		tb_end(&t);
		assert_paths(&t, want, 2);
		free(t.p);
	}
}

/* An old-style regular file ('\0') whose name ends in '/' is a directory. */
static void
test_tar_nul_type_dir(void **state)
{
	struct tarbuf t = { 0 };
	struct seen s;
	struct al_err err;

	(void)state;
	tb_header(&t, '\0', "srv/vault/", 0311, 0, 0, 0, NULL);
	tb_header(&t, '\0', "srv/key", 0600, 0, 0, 0, NULL);
	tb_end(&t);
	assert_int_equal(parse_chunks(&t, 512, &s, &err), 0);
	assert_int_equal(s.e[0].type, '5');
	assert_int_equal(s.e[1].type, '0');
	free(t.p);
}

/* A GNU long name wins over a PAX path, in either order. */
static void
test_tar_gnu_name_wins(void **state)
{
	static const char *const want[] = { "pub/long", "pub/long" };
	struct tarbuf t = { 0 };

	(void)state;
	tb_header(&t, 'L', "././@LongLink", 0, 0, 0, 9, NULL);
	tb_bytes(&t, "pub/long", 9);
	tb_pax(&t, "path", "srv/vault/key");
	tb_file(&t, "a", 0600, 0, 0, NULL, 0);
	tb_pax(&t, "path", "srv/vault/key");
	tb_header(&t, 'L', "././@LongLink", 0, 0, 0, 9, NULL);
	tb_bytes(&t, "pub/long", 9);
	tb_file(&t, "b", 0600, 0, 0, NULL, 0);
	tb_end(&t);
	assert_paths(&t, want, 2);
	free(t.p);
}

/* Each PAX header replaces the records of the one before; a global one ends them all. */
static void
test_tar_pax_replaced(void **state)
{
	static const char *const want[] = { "pub/x", "pub/y", "pub/z" };
	struct tarbuf t = { 0 };
	struct seen s;
	struct al_err err;

	(void)state;
	tb_pax(&t, "path", "srv/vault/key");
	tb_pax(&t, "SCHILY.xattr.system.posix_acl_access", "x");
	tb_pax(&t, "mtime", "1");
	tb_file(&t, "pub/x", 0600, 0, 0, NULL, 0);
	tb_pax(&t, "path", "srv/vault/key");
	tb_header(&t, 'g', "pax_global_header", 0644, 0, 0, 11, NULL);
	tb_bytes(&t, "11 mtime=1\n", 11);
	tb_file(&t, "pub/y", 0600, 0, 0, NULL, 0);
	tb_header(&t, 'L', "././@LongLink", 0, 0, 0, 14, NULL);
	tb_bytes(&t, "srv/vault/key", 14);
	tb_header(&t, 'g', "pax_global_header", 0644, 0, 0, 11, NULL);
	tb_bytes(&t, "11 mtime=1\n", 11);
	tb_file(&t, "pub/z", 0600, 0, 0, NULL, 0);
	tb_end(&t);
	assert_paths(&t, want, 3);
	assert_int_equal(parse_chunks(&t, 512, &s, &err), 0);
	assert_false(s.e[0].acl);	/* the ACL record was replaced too */
	free(t.p);
}

/* GNU sparse records can rename an entry and remap its data: refused. */
static void
test_tar_gnu_sparse_refused(void **state)
{
	struct tarbuf t = { 0 };

	(void)state;
	tb_pax(&t, "GNU.sparse.name", "srv/vault/key");
	tb_file(&t, "pub/x", 0600, 0, 0, NULL, 0);
	tb_end(&t);
	assert_tar_refused(&t, 512, "GNU sparse");
}

/*
 * A GNU header has no name prefix, but Go reads its time fields as one
 * when they do not parse: refused. A STAR header's prefix is 131 bytes.
 */
static void
test_tar_gnu_and_star_prefix(void **state)
{
	char name[200];
	const char *want[] = { name };
	struct tarbuf t = { 0 };

	(void)state;
	tb_file(&t, "key", 0600, 0, 0, NULL, 0);
	memcpy(t.p + 257, "ustar  \0", 8);
	memcpy(t.p + 345, "srv/vault", 9);
	tb_resum(&t, 0);
	tb_end(&t);
	assert_tar_refused(&t, 512, "GNU header");

	tb_file(&t, "key", 0600, 0, 0, NULL, 0);
	memcpy(t.p + 345, "srv/vault", 9);		/* 131 bytes, no NUL */
	memset(t.p + 345 + 9, '/', 131 - 9);
	memcpy(t.p + 345 + 131, "00000000000", 11);	/* atime, then ctime */
	memcpy(t.p + 345 + 143, "00000000000", 11);
	memcpy(t.p + 508, "tar\0", 4);
	memcpy(name, t.p + 345, 131);
	snprintf(name + 131, sizeof name - 131, "/key");
	tb_resum(&t, 0);
	tb_end(&t);
	assert_paths(&t, want, 1);
	free(t.p);
}

static void
test_path_normalise(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(tar_path_normalise("./etc//key/", out, sizeof out), 0);
	assert_string_equal(out, "etc/key");
	assert_int_equal(tar_path_normalise("./", out, sizeof out), 0);
	assert_string_equal(out, "");
	assert_int_equal(tar_path_normalise("/a/./b", out, sizeof out), 0);
	assert_string_equal(out, "a/b");
	assert_int_equal(tar_path_normalise("a/../b", out, sizeof out), -1);
	assert_int_equal(tar_path_normalise("aaaaaaaaaa/bbbbbbbbbb", out, 8), -1);
}

/* --- the export: docker save format ------------------------------------ */

struct export {
	struct tarbuf tar;
	char image[72];
};

static void
sha_hex(const struct tarbuf *b, char out[65])
{
	hash_sha256_hex(b->p, b->len, out);
}

/*
 * An export of one image: layers given as archives, bottom first; the
 * config names their digests, the manifest their files. corrupt: 1 gives
 * layer 0 a wrong diff_id, 2 leaves the manifest out, 3 puts gzip bytes
 * where layer 0's tar should be; 4 corrupts nothing but makes the manifest
 * longer than one block (RepoTags), as real ones often are.
 */
static void
export_build(struct export *x, struct tarbuf *layers, size_t n, int corrupt)
{
	char config[4096], manifest[4096], hex[65], names[LAYERS_MAX][96], cfgname[80];
	size_t i, off;

	memset(x, 0, sizeof *x);
	off = (size_t)snprintf(config, sizeof config, "{\"architecture\":\"amd64\",\"rootfs\":"
			       "{\"type\":\"layers\",\"diff_ids\":[");
	for (i = 0; i < n; i++) {
		sha_hex(&layers[i], hex);
		if (corrupt == 1 && i == 0)
			hex[0] = hex[0] == '0' ? '1' : '0';
		off += (size_t)snprintf(config + off, sizeof config - off, "%s\"sha256:%s\"",
					i ? "," : "", hex);
		snprintf(names[i], sizeof names[i], "%0*zu/layer.tar", 64, i + 1);
	}
	snprintf(config + off, sizeof config - off, "]}}");
	hash_sha256_hex(config, strlen(config), hex);
	snprintf(x->image, sizeof x->image, "sha256:%s", hex);
	snprintf(cfgname, sizeof cfgname, "%s.json", hex);
	tb_file(&x->tar, cfgname, 0644, 0, 0, config, strlen(config));
	for (i = 0; i < n; i++) {
		tb_header(&x->tar, '5', names[i], 0755, 0, 0, 0, NULL);
		if (corrupt == 3 && i == 0)
			tb_file(&x->tar, names[i], 0644, 0, 0, "\x1f\x8b\x08 not a tar", 13);
		else
			tb_file(&x->tar, names[i], 0644, 0, 0, layers[i].p, layers[i].len);
	}
	off = (size_t)snprintf(manifest, sizeof manifest, "[{\"Config\":\"%s\",\"RepoTags\":%s,"
			       "\"Layers\":[", cfgname, corrupt == 4 ?
			       "[\"registry.example/a-rather-long-repository-name-for-airlock:"
			       "with-an-equally-long-tag-that-pushes-the-manifest-past-one-block\","
			       "\"registry.example/a-second-rather-long-repository-name-for-airlock:"
			       "with-another-long-tag-that-pushes-the-manifest-past-one-block\","
			       "\"registry.example/a-third-rather-long-repository-name-for-airlock:"
			       "with-a-third-long-tag-that-pushes-the-manifest-past-one-block\"]" :
			       "null");
	for (i = 0; i < n; i++)
		off += (size_t)snprintf(manifest + off, sizeof manifest - off, "%s\"%s\"",
					i ? "," : "", names[i]);
	snprintf(manifest + off, sizeof manifest - off, "]}]");
	if (corrupt != 2)
		tb_file(&x->tar, "manifest.json", 0644, 0, 0, manifest, strlen(manifest));
	tb_end(&x->tar);
}

/* Feed the export in steps; 0 and the verdict when it reads. */
static int
export_judge(const struct export *x, const struct strv *sealed, size_t step,
	     struct sealed_verdict *v, struct al_err *err)
{
	struct sealed_who who = { .uid = AGENT_UID, .gids = { AGENT_GID }, .n_gids = 1 };
	struct sealed_export se;
	size_t off, k;
	int rc;

	assert_int_equal(sealed_export_init(&se, sealed, err), 0);
	for (off = 0, rc = 0; off < x->tar.len && rc == 0; off += k) {
		k = x->tar.len - off < step ? x->tar.len - off : step;
		rc = sealed_export_feed(&se, x->tar.p + off, k);
	}
	if (rc == 0)
		rc = sealed_export_finish(&se, x->image);
	if (rc == 0)
		sealed_judge(se.order, se.n_order, sealed, &who, v);
	sealed_export_free(&se);
	return rc;
}

/* Two layers: the lower one has a readable key, the upper one whites it out. */
static void
two_layers(struct tarbuf l[2], bool whiteout)
{
	memset(l, 0, 2 * sizeof *l);
	tb_header(&l[0], '5', "./", 0755, 0, 0, 0, NULL);
	tb_header(&l[0], '5', "srv/", 0755, 0, 0, 0, NULL);
	tb_file(&l[0], "srv/key", 0644, 0, 0, "CANARY-lower", 12);
	tb_file(&l[0], "agent", 0755, 0, 0, "\x7f" "ELF", 4);
	tb_end(&l[0]);
	tb_header(&l[1], '5', "srv/", 0755, 0, 0, 0, NULL);
	if (whiteout)
		tb_file(&l[1], "srv/.wh.key", 0, 0, 0, NULL, 0);
	tb_file(&l[1], "srv/key2", 0600, 0, 0, "CANARY-upper", 12);
	tb_end(&l[1]);
}

static void
test_export_reads_layers_in_order(void **state)
{
	static const size_t steps[] = { 1, 13, 512, 65536 };
	struct sealed_verdict v;
	struct tarbuf l[2];
	struct strv sealed = { 0 };
	struct export x;
	struct al_err err;
	size_t i;

	(void)state;
	assert_int_equal(strv_push(&sealed, "/srv/key2"), 0);
	two_layers(l, false);
	export_build(&x, l, 2, 0);
	for (i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		memset(&v, 0, sizeof v);
		assert_int_equal(export_judge(&x, &sealed, steps[i], &v, &err), 0);
		assert_true(v.pass);
	}
	assert_int_equal(strv_push(&sealed, "/srv/key"), 0);
	assert_int_equal(export_judge(&x, &sealed, 4096, &v, &err), 0);
	assert_false(v.pass);
	assert_non_null(strstr(v.text, "/srv/key: readable"));
	assert_null(strstr(v.text, "CANARY"));
	free(x.tar.p);
	/* A manifest past one block reads the same, whole or a byte at a time. */
	export_build(&x, l, 2, 4);
	for (i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		memset(&v, 0, sizeof v);
		if (export_judge(&x, &sealed, steps[i], &v, &err) != 0)
			fail_msg("step %zu: %s", steps[i], err.msg);
		assert_non_null(strstr(v.text, "/srv/key: readable"));
	}
	free(x.tar.p);
	free(l[0].p);
	free(l[1].p);
	/* The upper layer's whiteout removes it: now it is not in the image. */
	two_layers(l, true);
	export_build(&x, l, 2, 0);
	assert_int_equal(export_judge(&x, &sealed, 4096, &v, &err), 0);
	assert_false(v.pass);
	assert_non_null(strstr(v.text, "/srv/key: not in the image"));
	free(x.tar.p);
	free(l[0].p);
	free(l[1].p);
	strv_free(&sealed);
}

static void
test_export_faults(void **state)
{
	static const struct { int corrupt; const char *msg; } cases[] = {
		{ 1, "does not match its diff_id" },
		{ 2, "manifest.json missing" },
		{ 3, "not an uncompressed tar" },
	};
	struct sealed_verdict v;
	struct tarbuf l[2];
	struct strv sealed = { 0 };
	struct export x;
	struct al_err err;
	size_t i;

	(void)state;
	assert_int_equal(strv_push(&sealed, "/srv/key2"), 0);
	two_layers(l, false);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		export_build(&x, l, 2, cases[i].corrupt);
		err.msg[0] = '\0';
		assert_int_equal(export_judge(&x, &sealed, 777, &v, &err), -1);
		if (!strstr(err.msg, cases[i].msg))
			fail_msg("case %zu: %s", i, err.msg);
		free(x.tar.p);
	}
	/* Another image's ID: the config is not the one asked for. */
	export_build(&x, l, 2, 0);
	x.image[8] = x.image[8] == 'a' ? 'b' : 'a';
	assert_int_equal(export_judge(&x, &sealed, 777, &v, &err), -1);
	assert_non_null(strstr(err.msg, "config is not the image"));
	/* Truncated: never finished. */
	x.tar.len -= 1500;
	assert_int_equal(export_judge(&x, &sealed, 777, &v, &err), -1);
	assert_non_null(strstr(err.msg, "truncated"));
	free(x.tar.p);
	free(l[0].p);
	free(l[1].p);
	strv_free(&sealed);
}

/* --- extended attributes ---------------------------------------------- */

/*
 * One layer: /srv 0755, /srv/vault 0700 root holding "hidden-name" 0600,
 * /srv/key 0600 root; the entry named at gives xattr (a PAX record, its
 * value a canary). Judged through the export.
 */
static int
xattr_judge(const char *at, const char *xattr, const char *sealed_path,
	    struct sealed_verdict *v, struct al_err *err)
{
	static const char *const names[] = { "srv/key", "srv/vault/", "srv/vault/hidden-name" };
	static const char types[] = { '0', '5', '0' };
	static const unsigned modes[] = { 0600, 0700, 0600 };
	struct tarbuf l = { 0 };
	struct strv sealed = { 0 };
	struct export x;
	char key[128];
	size_t i;
	int rc;

	assert_int_equal(strv_push(&sealed, sealed_path), 0);
	tb_header(&l, '5', "./", 0755, 0, 0, 0, NULL);
	tb_header(&l, '5', "srv/", 0755, 0, 0, 0, NULL);
	for (i = 0; i < 3; i++) {
		if (at && strcmp(at, names[i]) == 0) {
			snprintf(key, sizeof key, "SCHILY.xattr.%s", xattr);
			tb_pax(&l, key, "CANARY-xattr-value");
		}
		if (types[i] == '5')
			tb_header(&l, '5', names[i], modes[i], 0, 0, 0, NULL);
		else
			tb_file(&l, names[i], modes[i], 0, 0, "CANARY", 6);
	}
	tb_end(&l);
	export_build(&x, &l, 1, 0);
	memset(v, 0, sizeof *v);
	err->msg[0] = '\0';
	rc = export_judge(&x, &sealed, 1000, v, err);
	assert_null(strstr(v->text, "CANARY"));
	if (!strstr(sealed_path, "hidden-name"))	/* a name below: never shown */
		assert_null(strstr(v->text, "hidden-name"));
	assert_null(strstr(err->msg, "CANARY"));
	free(x.tar.p);
	free(l.p);
	strv_free(&sealed);
	return rc;
}

static void
assert_xattr_refused(const char *at, const char *xattr, const char *sealed_path,
		     const char *reason)
{
	struct sealed_verdict v;
	struct al_err err;

	assert_int_equal(xattr_judge(at, xattr, sealed_path, &v, &err), 0);
	if (v.pass || !strstr(v.text, reason))
		fail_msg("%s on %s: %s: %s", xattr, at, v.pass ? "pass" : "refused", v.text);
	assert_true(strncmp(v.text, sealed_path, strlen(sealed_path)) == 0);
}

static void
assert_xattr_passes(const char *at, const char *xattr, const char *sealed_path)
{
	struct sealed_verdict v;
	struct al_err err;

	assert_int_equal(xattr_judge(at, xattr, sealed_path, &v, &err), 0);
	if (!v.pass)
		fail_msg("%s on %s: refused: %s", xattr, at, v.text);
}

/* An LSM label or an unknown system.* attribute cannot be judged: refused. */
static void
test_xattr_unjudged_refused(void **state)
{
	(void)state;
	assert_xattr_passes(NULL, NULL, "/srv/key");
	assert_xattr_refused("srv/key", "security.selinux", "/srv/key",
			     "a security.* xattr");
	assert_xattr_refused("srv/key", "security.SMACK64", "/srv/key",
			     "a security.* xattr");
	assert_xattr_refused("srv/key", "system.nfs4_acl", "/srv/key",
			     "a system.* xattr");
	/* Below a sealed directory: refused without naming the entry. */
	assert_xattr_refused("srv/vault/hidden-name", "security.ima", "/srv/vault",
			     "an entry below, carries a security.* xattr");
	/* On the sealed directory itself. */
	assert_xattr_refused("srv/vault/", "system.posix_acl_default", "/srv/vault",
			     "POSIX ACL");
}

/* A parent's ACL could grant the search its mode denies. */
static void
test_xattr_on_parent_refused(void **state)
{
	(void)state;
	assert_xattr_refused("srv/vault/", "system.posix_acl_access", "/srv/vault/hidden-name",
			     "a parent carries a POSIX ACL");
	assert_xattr_refused("srv/vault/", "security.selinux", "/srv/vault/hidden-name",
			     "a parent carries a security.* xattr");
	assert_xattr_passes("srv/vault/", "user.comment", "/srv/vault/hidden-name");
}

/*
 * Understood and harmless to the verdict: file capabilities (they act on
 * exec only, and admission requires CapDrop ALL and no-new-privileges),
 * user.* and other trusted.* attributes (they grant no access).
 */
static void
test_xattr_understood_passes(void **state)
{
	(void)state;
	assert_xattr_passes("srv/key", "security.capability", "/srv/key");
	assert_xattr_passes("srv/key", "user.mime_type", "/srv/key");
	assert_xattr_passes("srv/vault/hidden-name", "trusted.md5sum", "/srv/vault");
}

/* overlayfs's own attributes change what the layers show: the export is refused. */
static void
test_xattr_overlay_refused(void **state)
{
	struct sealed_verdict v;
	struct al_err err;

	(void)state;
	assert_int_equal(xattr_judge("srv/vault/", "trusted.overlay.opaque", "/srv/key", &v,
				     &err), -1);
	assert_non_null(strstr(err.msg, "overlayfs attribute"));
	assert_int_equal(xattr_judge("srv/key", "user.overlay.redirect", "/srv/vault", &v,
				     &err), -1);
	assert_non_null(strstr(err.msg, "overlayfs attribute"));
}

/* --- the admission row ---------------------------------------------------- */

static json_t *
fixture(const char *name)
{
	const char *dir = getenv("AIRLOCK_FIXTURES");
	char path[512];
	json_t *j;

	assert_non_null(dir);
	snprintf(path, sizeof path, "%s/%s", dir, name);
	j = json_load_file(path, 0, NULL);
	assert_non_null(j);
	return j;
}

/* The "sealed" item of a report judged with verdict v (NULL: not read). */
static struct check_item
sealed_item(const struct profile *p, const struct sealed_verdict *v)
{
	json_t *c = fixture("inspect-ok.json"), *img = fixture("image-ok.json");
	struct host_facts host = { .cores = 2, .runtime_runc = true };
	struct check_list l;
	struct check_item it;

	check_list_init(&l);
	admission_check_files(c, img, p, &host, v, &l);
	assert_non_null(check_list_find(&l, "sealed"));
	it = *check_list_find(&l, "sealed");
	check_list_free(&l);
	json_decref(c);
	json_decref(img);
	return it;
}

static void
test_admission_row(void **state)
{
	json_t *c = fixture("inspect-ok.json");
	struct sealed_verdict v = { .pass = true };
	struct profile p;
	struct check_item it;

	(void)state;
	profile_defaults(&p);
	snprintf(p.image, sizeof p.image, "%s", json_string_value(json_object_get(c, "Image")));
	it = sealed_item(&p, NULL);
	assert_true(it.pass);
	assert_string_equal(it.observed, "none configured");

	assert_int_equal(strv_push(&p.sealed, "/secret"), 0);
	it = sealed_item(&p, NULL);
	assert_false(it.pass);
	assert_string_equal(it.observed, "image files not read");

	snprintf(v.image, sizeof v.image, "%s", json_string_value(json_object_get(c, "Image")));
	snprintf(v.user, sizeof v.user, "10001:10001");
	snprintf(v.text, sizeof v.text, "1 sealed, none readable by 10001:10001 (+0 groups)");
	it = sealed_item(&p, &v);
	assert_true(it.pass);
	assert_string_equal(it.expected, "1 sealed path unreadable");

	snprintf(v.user, sizeof v.user, "10002:10002");	/* judged for someone else */
	it = sealed_item(&p, &v);
	assert_false(it.pass);
	assert_string_equal(it.observed, "judged for another image or user");

	snprintf(v.user, sizeof v.user, "10001:10001");
	v.pass = false;
	snprintf(v.text, sizeof v.text, "/secret: readable by 10001:10001 (mode 0644, owner 0:0)");
	it = sealed_item(&p, &v);
	assert_false(it.pass);
	assert_non_null(strstr(it.observed, "/secret: readable"));
	profile_free(&p);
	json_decref(c);
}

/* --- /airlock/shim read from the export (admission's shim_digest) ------- */

#define SHIM_A	"SHIM-BUILD-A: the engine's own"
#define SHIM_B	"SHIM-BUILD-B: another build"

/* What the container shows at /airlock/shim, the export fed in steps of step. */
static int
export_shim(const struct export *x, size_t step, struct sealed_file *f, struct al_err *err)
{
	struct strv none = { 0 };
	struct sealed_export se;
	size_t off, k;
	int rc;

	assert_int_equal(sealed_export_init(&se, &none, err), 0);
	assert_int_equal(sealed_export_watch(&se, SHIM_IMAGE_PATH), 0);
	for (off = 0, rc = 0; off < x->tar.len && rc == 0; off += k) {
		k = x->tar.len - off < step ? x->tar.len - off : step;
		rc = sealed_export_feed(&se, x->tar.p + off, k);
	}
	if (rc == 0)
		rc = sealed_export_finish(&se, x->image);
	if (rc == 0)
		sealed_file_of(se.order, se.n_order, "airlock/shim", f);
	sealed_export_free(&se);
	return rc;
}

/* Layer 0: the agent and /airlock/shim holding SHIM_A; layer 1: what top adds. */
enum shim_top { TOP_NONE, TOP_REPLACE, TOP_WHITEOUT, TOP_OPAQUE, TOP_FILE_DIR,
		TOP_SYMLINK, TOP_HARDLINK, TOP_ADD_ONLY };

static void
shim_layers(struct tarbuf l[2], enum shim_top top, bool lower_shim)
{
	memset(l, 0, 2 * sizeof *l);
	tb_header(&l[0], '5', "./", 0755, 0, 0, 0, NULL);
	tb_file(&l[0], "agent", 0755, 0, 0, "\x7f" "ELF", 4);
	if (lower_shim) {
		tb_header(&l[0], '5', "airlock/", 0755, 0, 0, 0, NULL);
		tb_file(&l[0], "airlock/shim", 0555, 0, 0, SHIM_A, strlen(SHIM_A));
	}
	tb_end(&l[0]);
	if (top == TOP_REPLACE || top == TOP_ADD_ONLY) {
		tb_header(&l[1], '5', "airlock/", 0755, 0, 0, 0, NULL);
		tb_file(&l[1], "./airlock/shim", 0555, 0, 0, top == TOP_REPLACE ? SHIM_B : SHIM_A,
			strlen(top == TOP_REPLACE ? SHIM_B : SHIM_A));
	} else if (top == TOP_WHITEOUT) {
		tb_file(&l[1], "airlock/.wh.shim", 0, 0, 0, NULL, 0);
	} else if (top == TOP_OPAQUE) {
		tb_header(&l[1], '5', "airlock/", 0755, 0, 0, 0, NULL);
		tb_file(&l[1], "airlock/.wh..wh..opq", 0, 0, 0, NULL, 0);
	} else if (top == TOP_FILE_DIR) {
		tb_file(&l[1], "airlock", 0644, 0, 0, SHIM_A, strlen(SHIM_A));
	} else if (top == TOP_SYMLINK) {
		tb_file(&l[1], "airlock/.wh.shim", 0, 0, 0, NULL, 0);
		tb_header(&l[1], '2', "airlock/shim", 0777, 0, 0, 0, "/agent");
	} else if (top == TOP_HARDLINK) {
		tb_file(&l[1], "airlock/.wh.shim", 0, 0, 0, NULL, 0);
		tb_header(&l[1], '1', "airlock/shim", 0555, 0, 0, 0, "agent");
	}
	tb_end(&l[1]);
}

static void
shim_case(enum shim_top top, bool lower_shim, size_t step, struct sealed_file *f)
{
	struct tarbuf l[2];
	struct export x;
	struct al_err err;

	shim_layers(l, top, lower_shim);
	export_build(&x, l, 2, 0);
	memset(f, 0x5a, sizeof *f);
	if (export_shim(&x, step, f, &err) != 0)
		fail_msg("top %d: %s", (int)top, err.msg);
	assert_true(f->read);
	free(x.tar.p);
	free(l[0].p);
	free(l[1].p);
}

static void
test_export_shim_digest(void **state)
{
	static const size_t steps[] = { 1, 7, 512, 65536 };
	char a[65], b[65];
	struct sealed_file f;
	size_t i;

	(void)state;
	hash_sha256_hex(SHIM_A, strlen(SHIM_A), a);
	hash_sha256_hex(SHIM_B, strlen(SHIM_B), b);
	/* The content's digest, however the bytes arrive. */
	for (i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		shim_case(TOP_NONE, true, steps[i], &f);
		assert_true(f.present);
		assert_int_equal(f.type, '0');
		assert_int_equal(f.mode, 0555);
		assert_true(f.uid == 0 && f.gid == 0);
		assert_string_equal(f.digest, a);
	}
	/* Added by the top layer only (as add-shim does), or replaced there. */
	shim_case(TOP_ADD_ONLY, false, 13, &f);
	assert_true(f.present);
	assert_string_equal(f.digest, a);
	shim_case(TOP_REPLACE, true, 13, &f);
	assert_string_equal(f.digest, b);
	/* Absent: never there, whited out, hidden by an opaque dir or a file above. */
	shim_case(TOP_NONE, false, 13, &f);
	assert_false(f.present);
	assert_string_equal(f.digest, "");
	shim_case(TOP_WHITEOUT, true, 13, &f);
	assert_false(f.present);
	shim_case(TOP_OPAQUE, true, 13, &f);
	assert_false(f.present);
	shim_case(TOP_FILE_DIR, true, 13, &f);
	assert_false(f.present);
	/* Not a regular file: no digest, whatever it points at. */
	shim_case(TOP_SYMLINK, true, 13, &f);
	assert_true(f.present);
	assert_int_equal(f.type, '2');
	assert_string_equal(f.digest, "");
	shim_case(TOP_HARDLINK, true, 13, &f);
	assert_true(f.present);
	assert_int_equal(f.type, '1');
	assert_string_equal(f.digest, "");
}

/* The sealed verdict is the same with the shim watched: nothing else is judged. */
static void
test_export_shim_keeps_sealed(void **state)
{
	struct sealed_verdict plain, watched;
	struct strv sealed = { 0 };
	struct sealed_who who = { .uid = AGENT_UID, .gids = { AGENT_GID }, .n_gids = 1 };
	struct sealed_export se;
	struct tarbuf l[2];
	struct export x;
	struct al_err err;

	(void)state;
	assert_int_equal(strv_push(&sealed, "/srv/key"), 0);
	two_layers(l, false);
	export_build(&x, l, 2, 0);
	assert_int_equal(export_judge(&x, &sealed, 4096, &plain, &err), 0);
	assert_int_equal(sealed_export_init(&se, &sealed, &err), 0);
	assert_int_equal(sealed_export_watch(&se, SHIM_IMAGE_PATH), 0);
	assert_int_equal(sealed_export_watch(&se, SHIM_IMAGE_PATH), -1);	/* one path */
	assert_int_equal(sealed_export_feed(&se, x.tar.p, x.tar.len), 0);
	assert_int_equal(sealed_export_finish(&se, x.image), 0);
	sealed_judge(se.order, se.n_order, &sealed, &who, &watched);
	sealed_file_of(se.order, se.n_order, "airlock/shim", &watched.shim);
	assert_int_equal(plain.pass, watched.pass);
	assert_false(plain.pass);
	assert_string_equal(plain.text, watched.text);
	assert_true(watched.shim.read);
	assert_false(watched.shim.present);
	sealed_export_free(&se);
	free(x.tar.p);
	free(l[0].p);
	free(l[1].p);
	strv_free(&sealed);
}

/* The "shim_digest" item of a report judged with verdict v (NULL: not read). */
static struct check_item
shim_item(const struct profile *p, const struct sealed_verdict *v, const json_t *c)
{
	json_t *img = fixture("image-ok.json");
	struct host_facts host = { .cores = 2, .runtime_runc = true };
	struct check_list l;
	struct check_item it;

	check_list_init(&l);
	admission_check_files(c, img, p, &host, v, &l);
	assert_int_equal(l.n, ADMISSION_CHECK_COUNT);
	assert_non_null(check_list_find(&l, "shim_digest"));
	it = *check_list_find(&l, "shim_digest");
	check_list_free(&l);
	json_decref(img);
	return it;
}

static void
test_admission_shim_row(void **state)
{
	json_t *c = fixture("inspect-ok.json");
	struct sealed_verdict v;
	struct profile p;
	struct check_item it;
	char a[65], b[65];

	(void)state;
	hash_sha256_hex(SHIM_A, strlen(SHIM_A), a);
	hash_sha256_hex(SHIM_B, strlen(SHIM_B), b);
	profile_defaults(&p);
	snprintf(p.image, sizeof p.image, "%s", json_string_value(json_object_get(c, "Image")));
	/* Not an MCP session: not applicable, whatever the files say. */
	it = shim_item(&p, NULL, c);
	assert_true(it.pass);
	assert_string_equal(it.observed, "not applicable: not an MCP session");
	/* ... but no container document is still a refusal. */
	it = shim_item(&p, NULL, NULL);
	assert_false(it.pass);
	assert_string_equal(it.observed, "missing");

	p.shim_required = true;
	it = shim_item(&p, NULL, c);		/* the engine could not read its own */
	assert_false(it.pass);
	assert_string_equal(it.observed, "the engine's own airlock-shim could not be read");
	snprintf(p.shim_sha256, sizeof p.shim_sha256, "%s", a);
	it = shim_item(&p, NULL, c);
	assert_false(it.pass);
	assert_string_equal(it.observed, "image files not read");
	assert_non_null(strstr(it.expected, a));

	memset(&v, 0, sizeof v);
	snprintf(v.image, sizeof v.image, "%s", json_string_value(json_object_get(c, "Image")));
	snprintf(v.user, sizeof v.user, "10001:10001");
	snprintf(v.shim.text, sizeof v.shim.text, "image export: truncated");
	it = shim_item(&p, &v, c);
	assert_false(it.pass);
	assert_string_equal(it.observed, "image files not read: image export: truncated");

	v.shim.read = true;			/* read: absent */
	it = shim_item(&p, &v, c);
	assert_false(it.pass);
	assert_string_equal(it.observed, "absent from the image");

	v.shim.present = true;
	v.shim.type = '2';
	it = shim_item(&p, &v, c);
	assert_false(it.pass);
	assert_string_equal(it.observed, "not a regular file (tar type 2)");

	v.shim.type = '0';
	v.shim.mode = 0555;
	snprintf(v.shim.digest, sizeof v.shim.digest, "%s", b);
	it = shim_item(&p, &v, c);
	assert_false(it.pass);
	assert_non_null(strstr(it.observed, b));
	assert_non_null(strstr(it.observed, "another build"));

	snprintf(v.shim.digest, sizeof v.shim.digest, "%s", a);
	it = shim_item(&p, &v, c);
	assert_true(it.pass);
	assert_non_null(strstr(it.observed, a));
	assert_non_null(strstr(it.observed, "mode 0555, owner 0:0"));

	v.image[10] ^= 1;			/* judged for another image */
	it = shim_item(&p, &v, c);
	assert_false(it.pass);
	assert_string_equal(it.observed, "judged for another image");
	profile_free(&p);
	json_decref(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root_0600_passes),
		cmocka_unit_test(test_root_0644_refused),
		cmocka_unit_test(test_group_bits),
		cmocka_unit_test(test_group_excludes_other),
		cmocka_unit_test(test_owned_by_agent_refused),
		cmocka_unit_test(test_parent_without_search_protects),
		cmocka_unit_test(test_missing_parent_is_searchable),
		cmocka_unit_test(test_init_layer_dirs),
		cmocka_unit_test(test_dir_0700_passes),
		cmocka_unit_test(test_dir_listable_refused),
		cmocka_unit_test(test_dir_entries_below),
		cmocka_unit_test(test_whiteout_removes_lower),
		cmocka_unit_test(test_whiteout_of_sealed_path),
		cmocka_unit_test(test_whiteout_of_directory),
		cmocka_unit_test(test_opaque_directory),
		cmocka_unit_test(test_upper_layer_wins),
		cmocka_unit_test(test_file_replaces_directory),
		cmocka_unit_test(test_symlinks),
		cmocka_unit_test(test_hard_link_across_boundary),
		cmocka_unit_test(test_acl_refused),
		cmocka_unit_test(test_not_in_image),
		cmocka_unit_test(test_irrelevant_entries_dropped),
		cmocka_unit_test(test_dotdot_entry_refused),
		cmocka_unit_test(test_id_past_32_bits_refused),
		cmocka_unit_test(test_who),
		cmocka_unit_test(test_config_paths),
		cmocka_unit_test(test_config_shape),
		cmocka_unit_test(test_config_through_profile),
		cmocka_unit_test(test_tar_stream_fields),
		cmocka_unit_test(test_tar_stream_faults),
		cmocka_unit_test(test_path_normalise),
		cmocka_unit_test(test_tar_header_only_types),
		cmocka_unit_test(test_tar_nul_type_dir),
		cmocka_unit_test(test_tar_gnu_name_wins),
		cmocka_unit_test(test_tar_pax_replaced),
		cmocka_unit_test(test_tar_gnu_sparse_refused),
		cmocka_unit_test(test_tar_gnu_and_star_prefix),
		cmocka_unit_test(test_export_reads_layers_in_order),
		cmocka_unit_test(test_export_faults),
		cmocka_unit_test(test_xattr_unjudged_refused),
		cmocka_unit_test(test_xattr_on_parent_refused),
		cmocka_unit_test(test_xattr_understood_passes),
		cmocka_unit_test(test_xattr_overlay_refused),
		cmocka_unit_test(test_admission_row),
		cmocka_unit_test(test_export_shim_digest),
		cmocka_unit_test(test_export_shim_keeps_sealed),
		cmocka_unit_test(test_admission_shim_row),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
