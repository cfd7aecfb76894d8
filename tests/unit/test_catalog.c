#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "config_inline.h"
#include "path_reason.h"
#include "scratch.h"
#include "upstream_catalog.h"

/*
 * The operate role is not root (docs/operations.md, "Who may connect:
 * roles"): the installed upstreams' checks (owner, mode, symlinks, keys),
 * the refusal of argv, env, cwd and files in a non-root peer's config, an
 * installed upstream loaded by key, and a config read on the caller's
 * side: its relative paths made absolute, an unreadable one refused there.
 */

static char dir[256];

static int
setup(void **state)
{
	(void)state;
	scratch_make(dir, sizeof dir, "catalog");
	return 0;
}

static int
teardown(void **state)
{
	char path[300];
	const char *nested[] = { "p/up/notes.json", "l", "p/up", "p" };	/* test_parents' */
	size_t i;

	(void)state;
	for (i = 0; i < sizeof nested / sizeof nested[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, nested[i]);
		if (remove(path) != 0 && errno != ENOENT)
			fail_msg("teardown: %s: %s", path, strerror(errno));
	}
	chmod(dir, 0700);
	scratch_remove(dir);
	return 0;
}

/* dir/name: text, with mode. */
static void
put(const char *name, const char *text, mode_t mode)
{
	scratch_put(dir, name, text, mode);
}

static struct stat
st_of(mode_t mode, uid_t uid)
{
	struct stat st;

	memset(&st, 0, sizeof st);
	st.st_mode = mode;
	st.st_uid = uid;
	return st;
}

/* --- pure: stat, keys, a peer's config ----------------------------------------- */

static void
test_fault(void **state)
{
	struct stat st;

	(void)state;
	st = st_of(S_IFDIR | 0755, 0);
	assert_null(upstream_catalog_fault(&st, true));
	st = st_of(S_IFREG | 0644, 0);
	assert_null(upstream_catalog_fault(&st, false));
	st = st_of(S_IFREG | 0644, 0);
	assert_string_equal(upstream_catalog_fault(&st, true), "not a directory");
	st = st_of(S_IFLNK | 0777, 0);
	assert_string_equal(upstream_catalog_fault(&st, false), "not a regular file");
	st = st_of(S_IFDIR | 0755, 1000);
	assert_string_equal(upstream_catalog_fault(&st, true), "not owned by root");
	st = st_of(S_IFREG | 0644, 1000);
	assert_string_equal(upstream_catalog_fault(&st, false), "not owned by root");
	st = st_of(S_IFDIR | 0775, 0);
	assert_string_equal(upstream_catalog_fault(&st, true), "group- or world-writable");
	st = st_of(S_IFREG | 0646, 0);
	assert_string_equal(upstream_catalog_fault(&st, false), "group- or world-writable");
	/* a directory above it: a sticky one may be world-writable (like /tmp) */
	st = st_of(S_IFDIR | 0755, 0);
	assert_null(upstream_catalog_parent_fault(&st));
	st = st_of(S_IFDIR | S_ISVTX | 0777, 0);
	assert_null(upstream_catalog_parent_fault(&st));
	st = st_of(S_IFDIR | 0777, 0);
	assert_string_equal(upstream_catalog_parent_fault(&st),
			    "group- or world-writable without the sticky bit");
	st = st_of(S_IFDIR | 0775, 0);
	assert_string_equal(upstream_catalog_parent_fault(&st),
			    "group- or world-writable without the sticky bit");
	st = st_of(S_IFDIR | S_ISVTX | 0777, 1000);
	assert_string_equal(upstream_catalog_parent_fault(&st), "not owned by root");
	st = st_of(S_IFLNK | 0777, 0);
	assert_string_equal(upstream_catalog_parent_fault(&st), "not a directory");
}

static void
test_keys(void **state)
{
	char long_key[UPSTREAM_CATALOG_KEY_MAX + 2];

	(void)state;
	assert_true(upstream_catalog_key_ok("notes"));
	assert_true(upstream_catalog_key_ok("my_notes-2"));
	assert_false(upstream_catalog_key_ok(""));
	assert_false(upstream_catalog_key_ok(NULL));
	assert_false(upstream_catalog_key_ok("-notes"));
	assert_false(upstream_catalog_key_ok("../notes"));
	assert_false(upstream_catalog_key_ok("a/b"));
	assert_false(upstream_catalog_key_ok("notes.json"));
	memset(long_key, 'a', sizeof long_key - 1);
	long_key[sizeof long_key - 1] = '\0';
	assert_false(upstream_catalog_key_ok(long_key));
	long_key[UPSTREAM_CATALOG_KEY_MAX] = '\0';
	assert_true(upstream_catalog_key_ok(long_key));
}

/* A non-root peer's config: the fixed word, and the message's words. */
static void
peer(const char *text, const char *word, const char *says)
{
	json_t *root = json_loads(text, 0, NULL);
	struct al_err err = { "" };
	const char *got;

	assert_non_null(root);
	got = upstream_catalog_peer_fault(root, NULL, &err);
	if (!word)
		assert_null(got);
	else
		assert_string_equal(got, word);
	if (says)
		assert_non_null(strstr(err.msg, says));
	json_decref(root);
}

static void
test_peer_refusals(void **state)
{
	(void)state;
	peer("{}", NULL, NULL);
	peer("{\"upstreams\": {\"n\": {\"installed\": \"notes\"}}}", NULL, NULL);
	peer("{\"upstreams\": {\"n\": {\"argv\": [\"/bin/sh\", \"-c\", \"id\"]}}}",
	     UPSTREAM_CATALOG_NOT_INSTALLED,
	     "upstreams.n: only root gives argv, env or cwd: root installs "
	     "/etc/airlock/upstreams.d/n.json");
	peer("{\"upstreams\": {\"n\": {\"installed\": \"notes\", \"argv\": [\"/bin/sh\"]}}}",
	     UPSTREAM_CATALOG_NOT_INSTALLED, "{\"installed\": \"n\"}");
	peer("{\"upstreams\": {\"n\": {\"installed\": \"notes\", \"env\": {\"LD_PRELOAD\": \"x\"}}}}",
	     UPSTREAM_CATALOG_NOT_INSTALLED, NULL);
	peer("{\"upstreams\": {\"n\": {\"installed\": \"notes\", \"cwd\": \"/root\"}}}",
	     UPSTREAM_CATALOG_NOT_INSTALLED, NULL);
	peer("{\"upstreams\": {\"n\": {\"installed\": 7}}}", UPSTREAM_CATALOG_NOT_INSTALLED, NULL);
	peer("{\"upstreams\": [\"/bin/sh\"]}", UPSTREAM_CATALOG_NOT_INSTALLED, "upstreams:");
	peer("{\"initial\": {\"file\": \"/etc/shadow\"}}", UPSTREAM_CATALOG_NAMES_FILE,
	     "initial.file: the engine opens no file for a peer that is not root");
}

/* --- the catalog on disk (root's: these need root) ------------------------------ */

static void
read_fails(const char *key, const char *says)
{
	struct al_err err = { "" };
	json_t *def = upstream_catalog_read(dir, key, &err);

	assert_null(def);
	if (!strstr(err.msg, says))
		fail_msg("'%s' does not say '%s'", err.msg, says);
}

static void
test_read(void **state)
{
	char path[512], link[512];
	struct al_err err = { "" };
	json_t *def;

	(void)state;
	if (geteuid() != 0)
		skip();
	put("notes.json", "{\"argv\": [\"/bin/cat\"]}", 0644);
	def = upstream_catalog_read(dir, "notes", &err);
	assert_non_null(def);
	assert_string_equal(json_string_value(json_array_get(json_object_get(def, "argv"), 0)),
			    "/bin/cat");
	json_decref(def);
	read_fails("ghost", "ghost.json: No such file or directory (root installs the definition");
	read_fails("../etc", "installed: expected a key");
	put("open.json", "{\"argv\": [\"/bin/cat\"]}", 0666);
	read_fails("open", "open.json: group- or world-writable");
	put("mine.json", "{\"argv\": [\"/bin/cat\"]}", 0644);
	snprintf(path, sizeof path, "%s/mine.json", dir);
	assert_int_equal(chown(path, 65534, 65534), 0);
	read_fails("mine", "mine.json: not owned by root");
	snprintf(link, sizeof link, "%s/link.json", dir);
	snprintf(path, sizeof path, "%s/notes.json", dir);
	assert_int_equal(symlink(path, link), 0);
	read_fails("link", "link.json: a symlink");
	put("bad.json", "[\"/bin/cat\"]", 0644);
	read_fails("bad", "bad.json: not a JSON object");
	put("dup.json", "{\"argv\": [\"/a\"], \"argv\": [\"/b\"]}", 0644);
	read_fails("dup", "dup.json: not a JSON object");
	assert_int_equal(chmod(dir, 0777), 0);
	read_fails("notes", "not group- or world-writable");
	assert_int_equal(chmod(dir, 0700), 0);
	assert_int_equal(chown(dir, 65534, 0), 0);
	read_fails("notes", ": not owned by root");
	assert_int_equal(chown(dir, 0, 0), 0);
}

/* The definition at up/notes.json read through path, failing with says (NULL: read). */
static void
read_at(const char *path, const char *says)
{
	struct al_err err = { "" };
	json_t *def = upstream_catalog_read(path, "notes", &err);

	if (!says) {
		if (!def)
			fail_msg("%s refused: %s", path, err.msg);
		json_decref(def);
		return;
	}
	if (def)
		fail_msg("%s was read; expected a refusal saying '%s'", path, says);
	if (!strstr(err.msg, says))
		fail_msg("'%s' does not say '%s'", err.msg, says);
}

/*
 * Each directory above the catalog's must be root's too: DIR/p/up, where
 * p is made writable, another user's, or a symlink's target; the path
 * relative or through "..".
 */
static void
test_parents(void **state)
{
	char p[300], up[320], link[300], via[340], says[1200];

	(void)state;
	if (geteuid() != 0)
		skip();
	snprintf(p, sizeof p, "%s/p", dir);
	snprintf(up, sizeof up, "%s/up", p);
	snprintf(link, sizeof link, "%s/l", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(mkdir(up, 0755), 0);
	assert_int_equal(symlink(p, link), 0);
	put("p/up/notes.json", "{\"argv\": [\"/bin/cat\"]}", 0644);
	read_at(up, NULL);
	assert_int_equal(chmod(p, 0777), 0);
	snprintf(says, sizeof says, "directory %s: %s: group- or world-writable without the "
		 "sticky bit (it and each directory above it must be root's", up, p);
	read_at(up, says);
	assert_int_equal(chmod(p, 01777), 0);
	read_at(up, NULL);
	assert_int_equal(chmod(p, 0755), 0);
	assert_int_equal(chown(p, 65534, 0), 0);
	snprintf(says, sizeof says, "%s: not owned by root", p);
	read_at(up, says);
	assert_int_equal(chown(p, 0, 0), 0);
	snprintf(via, sizeof via, "%s/up", link);
	snprintf(says, sizeof says, "%s: a symlink or not a directory", link);
	read_at(via, says);
	snprintf(via, sizeof via, "%s/p/../p/up", dir);
	read_at(via, ": a .. in the path");
	read_at(up + 1, ": not an absolute path");
	snprintf(via, sizeof via, "%s//p/./up/", dir);
	read_at(via, NULL);
}

/* --- what an installed upstream runs ------------------------------------------- */

static int
remove_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(path);
}

/* dir/code/REL, made with its parents (0755), holding text, with mode. */
static void
code_file(const char *rel, mode_t mode)
{
	char path[512], *slash;

	snprintf(path, sizeof path, "%s/code/%s", dir, rel);
	for (slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			fail_msg("mkdir %s: %s", path, strerror(errno));
		*slash = '/';
	}
	snprintf(path, sizeof path, "%s/code/%s", dir, rel);
	put(path + strlen(dir) + 1, "#!/bin/sh\n", mode);
}

/* The fault for argv (dir/code/ prefixed to each relative word), rw: NULL or saying. */
static void
code_says(const char *const *words, const char *rw, const char *at, const char *says)
{
	struct strv argv = { 0 }, w = { 0 }, r = { 0 };
	char path[512], got[4096] = "", want[512];
	const char *why;
	size_t i;

	for (i = 0; words[i]; i++) {
		snprintf(path, sizeof path, "%s/code/%s", dir, words[i]);
		assert_int_equal(strv_push(&argv, words[i][0] == '-' ? words[i] : path), 0);
	}
	if (rw) {
		snprintf(path, sizeof path, "%s/code/%s", dir, rw);
		assert_int_equal(strv_push(&w, path), 0);
	}
	why = upstream_catalog_code_fault(&argv, &w, &r, got, sizeof got);
	strv_free(&argv);
	strv_free(&w);
	if (!says) {
		if (why)
			fail_msg("refused: %s: %s", got, why);
		return;
	}
	snprintf(want, sizeof want, "%s%s%s", at[0] == '/' ? "" : dir, at[0] == '/' ? "" : "/code/", at);
	if (!why || strcmp(why, says) != 0 || strcmp(got, want) != 0)
		fail_msg("expected '%s: %s', got '%s: %s'", want, says, got, why ? why : "(held)");
}

/*
 * What an installed upstream runs must be root's: its program's tree, the
 * tree as named, a node_modules tree above it, a script or a directory it
 * is given (unless declared under paths: data); each case is one entry
 * made another's, writable, or a symlink gone astray.
 */
static void
test_code(void **state)
{
	const char *server[] = { "bin/server", NULL }, *named[] = { "named/server", NULL };
	const char *npm[] = { "nm/node_modules/pkg/bin.js", NULL };
	const char *script[] = { "bin/server", "scripts/s.js", NULL };
	const char *data_dir[] = { "bin/server", "scripts", NULL };
	char path[512], target[512];

	(void)state;
	if (geteuid() != 0)
		skip();
	code_file("bin/server", 0755);
	code_file("bin/lib/helper", 0644);
	code_says(server, NULL, "", NULL);
	snprintf(path, sizeof path, "%s/code/bin/lib/helper", dir);
	assert_int_equal(chmod(path, 0664), 0);
	code_says(server, NULL, "bin/lib/helper", "group- or world-writable");
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(chown(path, 65534, 65534), 0);
	code_says(server, NULL, "bin/lib/helper", "not owned by root");
	assert_int_equal(chown(path, 0, 0), 0);
	snprintf(path, sizeof path, "%s/code/bin/server", dir);
	assert_int_equal(chown(path, 65534, 0), 0);
	code_says(server, NULL, "bin/server", "not owned by root");
	assert_int_equal(chown(path, 0, 0), 0);

	code_file("other/theirs", 0644);	/* a symlink in the tree to another's file */
	snprintf(target, sizeof target, "%s/code/other/theirs", dir);
	assert_int_equal(chown(target, 65534, 65534), 0);
	snprintf(path, sizeof path, "%s/code/bin/ln", dir);
	assert_int_equal(symlink(target, path), 0);
	code_says(server, NULL, "bin/ln", "a symlink to what is not root's");
	assert_int_equal(chown(target, 0, 0), 0);
	code_says(server, NULL, "", NULL);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink("/nonexistent/airlock-test", path), 0);
	code_says(server, NULL, "bin/ln",
		  "a symlink to nothing (whoever could create its target would run)");
	assert_int_equal(unlink(path), 0);

	code_file("named/loose", 0666);	/* the directory as named, elsewhere */
	snprintf(path, sizeof path, "%s/code/named/server", dir);
	snprintf(target, sizeof target, "%s/code/bin/server", dir);
	assert_int_equal(symlink(target, path), 0);
	code_says(named, NULL, "named/loose", "group- or world-writable");
	snprintf(path, sizeof path, "%s/code/named/loose", dir);
	assert_int_equal(chmod(path, 0644), 0);
	code_says(named, NULL, "", NULL);

	code_file("nm/node_modules/pkg/bin.js", 0755);	/* a dependency beside the package */
	code_file("nm/node_modules/dep/index.js", 0644);
	code_says(npm, NULL, "", NULL);
	snprintf(path, sizeof path, "%s/code/nm/node_modules/dep/index.js", dir);
	assert_int_equal(chown(path, 65534, 65534), 0);
	code_says(npm, NULL, "nm/node_modules/dep/index.js", "not owned by root");
	assert_int_equal(chown(path, 0, 0), 0);

	code_file("scripts/s.js", 0644);	/* a script or a directory of another's; data is not */
	snprintf(path, sizeof path, "%s/code/scripts", dir);
	assert_int_equal(chown(path, 65534, 65534), 0);
	code_says(script, NULL, "scripts", "not owned by root");
	code_says(script, "scripts", "", NULL);
	code_says(data_dir, NULL, "scripts", "not owned by root");
	code_says(data_dir, "scripts", "", NULL);
	assert_int_equal(chown(path, 0, 0), 0);

	assert_int_equal(chmod(dir, 0777), 0);	/* a directory above the trees */
	code_says(server, NULL, dir, "group- or world-writable without the sticky bit");
	assert_int_equal(chmod(dir, 0700), 0);

	snprintf(path, sizeof path, "%s/code", dir);
	assert_int_equal(nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* A config as the engine loads one from a peer: 0, or -1 with err. */
static int
load_peer(const char *text, bool trusted, struct airlock_config *c, struct al_err *err)
{
	json_t *root = json_loads(text, 0, NULL);
	int rc;

	assert_non_null(root);
	config_init(c);
	c->upstreams_dir = dir;
	c->installed_only = !trusted;
	c->absolute_only = true;
	rc = config_load_json(c, root, 2, err);
	json_decref(root);
	return rc;
}

static void
test_load_installed(void **state)
{
	struct airlock_config c;
	struct al_err err = { "" };
	char prog[512], def[800], deep[200];

	(void)state;
	if (geteuid() != 0)
		skip();
	put("cat.json", "{\"argv\": [\"/bin/cat\", \"-u\"], \"env\": {\"PATH\": \"/bin\"}, "
	    "\"cwd\": \"/\", \"network\": \"none\"}", 0644);
	assert_int_equal(load_peer("{\"upstreams\": {\"n\": {\"installed\": \"cat\"}}}", false,
				   &c, &err), 0);
	assert_int_equal(c.n_upstreams, 1);
	assert_string_equal(c.upstreams[0].name, "n");
	assert_int_equal(c.upstreams[0].argv.n, 2);
	assert_string_equal(c.upstreams[0].argv.v[0], "/bin/cat");
	assert_string_equal(c.upstreams[0].cwd, "/");
	config_free(&c);

	assert_int_equal(load_peer("{\"upstreams\": {\"n\": {\"argv\": [\"/bin/sh\", \"-c\", "
				   "\"id\"]}}}", false, &c, &err), -1);
	assert_non_null(strstr(err.msg, "only root gives argv, env or cwd"));
	assert_int_equal(c.n_upstreams, 0);
	config_free(&c);
	/* root's own may: the same config from a trusted peer loads */
	assert_int_equal(load_peer("{\"upstreams\": {\"n\": {\"argv\": [\"/bin/sh\", \"-c\", "
				   "\"id\"]}}}", true, &c, &err), 0);
	config_free(&c);

	put("rel.json", "{\"argv\": [\"/bin/cat\"], \"cwd\": \"work\"}", 0644);
	assert_int_equal(load_peer("{\"upstreams\": {\"n\": {\"installed\": \"rel\"}}}", true,
				   &c, &err), -1);
	assert_string_equal(err.msg, "installed upstream rel: upstreams.n.cwd: expected an "
			    "absolute path (ctl resolves a relative one against the config "
			    "file's directory; an installed definition has none)");
	config_free(&c);
	put("nest.json", "{\"installed\": \"cat\"}", 0644);
	assert_int_equal(load_peer("{\"upstreams\": {\"n\": {\"installed\": \"nest\"}}}", true,
				   &c, &err), -1);
	assert_non_null(strstr(err.msg, "installed upstream nest: upstreams.n"));
	config_free(&c);
	assert_int_equal(load_peer("{\"upstreams\": {\"n\": {\"installed\": \"ghost\"}}}", false,
				   &c, &err), -1);
	assert_non_null(strstr(err.msg, "upstreams.n: installed upstream ghost: "));
	config_free(&c);
	/* what it runs must be root's: the definition is, its program is not */
	put("prog", "#!/bin/sh\n", 0755);
	snprintf(prog, sizeof prog, "%s/prog", dir);
	assert_int_equal(chown(prog, 65534, 65534), 0);
	snprintf(def, sizeof def, "{\"argv\": [\"%s\"]}", prog);
	put("theirs.json", def, 0644);
	assert_int_equal(load_peer("{\"upstreams\": {\"n\": {\"installed\": \"theirs\"}}}",
				   false, &c, &err), -1);
	snprintf(def, sizeof def, "installed upstream theirs: %s: not owned by root (what it "
		 "runs must be root's: its program, the directory it is in", prog);
	if (!strstr(err.msg, def))
		fail_msg("'%s' does not say '%s'", err.msg, def);
	assert_int_equal(c.n_upstreams, 1);	/* parsed, owned, and refused */
	config_free(&c);
	/* said whole, to its last word, with a path as long as the message keeps */
	snprintf(deep, sizeof deep, "%0180d", 0);
	snprintf(prog, sizeof prog, "%.250s/%s", dir, deep);
	assert_int_equal(mkdir(prog, 0755), 0);
	snprintf(deep + 180, sizeof deep - 180, "/p");
	put(deep, "#!/bin/sh\n", 0755);
	snprintf(prog, sizeof prog, "%.250s/%s", dir, deep);
	assert_int_equal(chown(prog, 65534, 65534), 0);
	snprintf(def, sizeof def, "{\"argv\": [\"%s\"]}", prog);
	put("deep.json", def, 0644);
	assert_int_equal(load_peer("{\"upstreams\": {\"n\": {\"installed\": \"deep\"}}}",
				   false, &c, &err), -1);
	if (!strstr(err.msg, ": not owned by root (what it runs must be root's: ") ||
	    strcmp(err.msg + strlen(err.msg) - strlen("root installs them so)"),
		   "root installs them so)") != 0)
		fail_msg("not said whole: '%s'", err.msg);
	config_free(&c);
	assert_int_equal(unlink(prog), 0);
	*strrchr(prog, '/') = '\0';
	assert_int_equal(rmdir(prog), 0);
}

/* A socket's config: no file to be relative to, so a relative path is refused. */
static void
test_relative_refused(void **state)
{
	struct airlock_config c;
	struct al_err err = { "" };

	(void)state;
	assert_int_equal(load_peer("{\"initial\": {\"file\": \"payload.json\", \"class\": \"public\"}}",
				   true, &c, &err),
			 -1);
	assert_non_null(strstr(err.msg, "initial.file: expected an absolute path"));
	config_free(&c);
}

/* --- the caller's side ------------------------------------------------------------ */

static void
test_inline_paths(void **state)
{
	json_t *root = json_loads(
		"{\"upstreams\": {\"u\": {\"argv\": [\"/bin/cat\"], \"cwd\": \"work\", "
		"\"paths\": {\"rw\": [\"sinks\", \"/abs\"], \"ro\": [\"data\"]}}},"
		" \"initial\": {\"file\": \"in.json\"}}", 0, NULL);
	json_t *u;

	(void)state;
	assert_non_null(root);
	assert_int_equal(config_inline_paths(root, "/home/op/cfg", NULL), 0);
	u = json_object_get(json_object_get(root, "upstreams"), "u");
	assert_string_equal(json_string_value(json_object_get(u, "cwd")), "/home/op/cfg/work");
	assert_string_equal(json_string_value(json_array_get(
		json_object_get(json_object_get(u, "paths"), "rw"), 0)), "/home/op/cfg/sinks");
	assert_string_equal(json_string_value(json_array_get(
		json_object_get(json_object_get(u, "paths"), "rw"), 1)), "/abs");
	assert_string_equal(json_string_value(json_array_get(
		json_object_get(json_object_get(u, "paths"), "ro"), 0)), "/home/op/cfg/data");
	assert_string_equal(json_string_value(json_object_get(json_object_get(root, "initial"),
							      "file")), "/home/op/cfg/in.json");
	json_decref(root);
}

/* check() run in a child as nobody (uid and gid 65534, no groups): true there, or the test fails. */
static void
as_nobody(bool (*check)(void))
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0)
			_exit(2);
		_exit(check() ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static bool
secret_refused(void)
{
	char path[300], want[800];
	struct al_err err = { "" };

	snprintf(path, sizeof path, "%s/secret.json", dir);
	snprintf(want, sizeof want, "config %s: %s", path, CONFIG_INLINE_UNREADABLE);
	return !config_inline_file(path, &err) && strcmp(err.msg, want) == 0;
}

/* A mode-000 config, read as nobody: refused with the fixed reason, nothing read. */
static void
test_inline_unreadable(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(chmod(dir, 0755), 0);
	put("secret.json", "{\"profile\": {}}", 0000);
	as_nobody(secret_refused);
}

/* initial.file read here and sent as initial.payload; refusals in fixed words. */
static void
test_inline_payload(void **state)
{
	char path[300], sub[300];
	struct al_err err = { "" };
	json_t *root, *initial;

	(void)state;
	put("in.json", "{\"note\": \"CANARY-9\"}", 0644);
	snprintf(path, sizeof path, "%s/in.json", dir);
	root = json_pack("{s:{s:s, s:s}}", "initial", "file", path, "class", "secret");
	assert_int_equal(config_inline_payload(root, &err), 0);
	initial = json_object_get(root, "initial");
	assert_null(json_object_get(initial, "file"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(initial, "payload"),
							      "note")), "CANARY-9");
	assert_string_equal(json_string_value(json_object_get(initial, "class")), "secret");
	json_decref(root);

	put("bad.json", "{\"note\": \"CANARY-9\" oops", 0644);
	snprintf(path, sizeof path, "%s/bad.json", dir);
	root = json_pack("{s:{s:s}}", "initial", "file", path);
	assert_int_equal(config_inline_payload(root, &err), -1);
	assert_non_null(strstr(err.msg, "bad.json: not valid JSON"));
	assert_null(strstr(err.msg, "CANARY"));	/* a parser's message would quote it */
	json_decref(root);

	snprintf(path, sizeof path, "%s/ghost.json", dir);
	root = json_pack("{s:{s:s}}", "initial", "file", path);
	assert_int_equal(config_inline_payload(root, &err), -1);
	assert_non_null(strstr(err.msg, "ghost.json: no such file"));
	json_decref(root);
	snprintf(sub, sizeof sub, "%s/p", dir);	/* teardown removes it */
	assert_int_equal(mkdir(sub, 0755), 0);
	root = json_pack("{s:{s:s}}", "initial", "file", sub);
	assert_int_equal(config_inline_payload(root, &err), -1);
	assert_non_null(strstr(err.msg, "/p: not a regular file"));
	json_decref(root);
	root = json_pack("{s:{s:s}}", "initial", "class", "secret");	/* no file: unchanged */
	assert_int_equal(config_inline_payload(root, &err), 0);
	assert_int_equal(json_object_size(json_object_get(root, "initial")), 1);
	json_decref(root);
}

/* Nobody's ctl: a.json's payload sent in the file's place, b.json's (root's) refused. */
static bool
payloads_as_nobody(void)
{
	char cfg[300];
	struct al_err err = { "" };
	json_t *a, *b;
	bool ok;

	snprintf(cfg, sizeof cfg, "%s/a.json", dir);
	a = config_inline_file(cfg, &err);
	ok = a && !json_object_get(json_object_get(a, "initial"), "file") &&
	     strcmp(json_string_value(json_object_get(json_object_get(json_object_get(
		     a, "initial"), "payload"), "note")), "for nobody") == 0;
	snprintf(cfg, sizeof cfg, "%s/b.json", dir);
	b = config_inline_file(cfg, &err);
	return ok && !b && strstr(err.msg, "/root.json: " CONFIG_INLINE_PAYLOAD_UNREADABLE);
}

/*
 * As nobody: config_inline_file sends a payload it can read in the file's
 * place, and refuses one only root can read, on its side.
 */
static void
test_inline_payload_as_nobody(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(chmod(dir, 0755), 0);
	put("open.json", "{\"note\": \"for nobody\"}", 0644);
	put("root.json", "{\"note\": \"root only\"}", 0600);
	put("a.json", "{\"initial\": {\"file\": \"open.json\"}}", 0644);
	put("b.json", "{\"initial\": {\"file\": \"root.json\"}}", 0644);
	as_nobody(payloads_as_nobody);
}

/* The engine's side: a payload only in a config sent to it, never with a file. */
static void
test_payload_loaded(void **state)
{
	struct airlock_config c;
	struct al_err err = { "" };
	json_t *root;

	(void)state;
	if (load_peer("{\"initial\": {\"class\": \"public\", \"payload\": "
		      "{\"note\": \"CANARY-9\"}}}", false, &c, &err) < 0)
		fail_msg("refused: %s", err.msg);
	assert_null(c.initial.file);
	assert_string_equal(json_string_value(json_object_get(c.initial.payload, "note")),
			    "CANARY-9");
	config_free(&c);
	assert_int_equal(load_peer("{\"initial\": {\"class\": \"public\", \"payload\": "
				   "{\"note\": \"CANARY-9\"}, \"file\": \"/in.json\"}}", true, &c,
				   &err), -1);
	assert_string_equal(err.msg, "initial: a file or a payload, not both");
	config_free(&c);
	/* a config the engine read itself (serve --config) names a file */
	root = json_loads("{\"initial\": {\"class\": \"public\", \"payload\": "
			  "{\"note\": \"CANARY-9\"}}}", 0, NULL);
	config_init(&c);
	assert_int_equal(config_load_json(&c, root, 2, &err), -1);
	assert_string_equal(err.msg, "initial.payload: only ctl sends one (write initial.file)");
	config_free(&c);
	json_decref(root);
}

/* The one "beneath" both the code walk and the sealed check use. */
static void
test_path_within(void **state)
{
	(void)state;
	assert_true(path_within("/opt/mcp", "/opt/mcp"));
	assert_true(path_within("/opt/mcp/bin/x", "/opt/mcp"));
	assert_false(path_within("/opt/mcpx", "/opt/mcp"));
	assert_false(path_within("/opt", "/opt/mcp"));
	assert_true(path_within("/opt/mcp", "/"));
	assert_true(path_within("/", "/"));
	assert_true(path_within("etc/shadow", "etc"));
	assert_false(path_within("etcx/shadow", "etc"));
	assert_false(path_within("etc", "etc/shadow"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_within),
		cmocka_unit_test(test_fault),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_peer_refusals),
		cmocka_unit_test_setup_teardown(test_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_code, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_installed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_relative_refused, setup, teardown),
		cmocka_unit_test(test_inline_paths),
		cmocka_unit_test_setup_teardown(test_inline_unreadable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inline_payload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inline_payload_as_nobody, setup, teardown),
		cmocka_unit_test_setup_teardown(test_payload_loaded, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
