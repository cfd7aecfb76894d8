#include "sealed.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "path_reason.h"

#define WHITEOUT	".wh."
#define OPAQUE		".wh..wh..opq"
#define DIR_DEFAULT	0755	/* what the daemon makes a directory the image leaves out */
/*
 * Ids at or past (uid_t)-1: Docker's unpacker passes a tar's id to chown,
 * which keeps the low 32 bits (2^32 + 10001 owns as 10001) or, for -1,
 * changes nothing. The export would still show the id as written.
 */
#define ID_NONE		0xffffffffULL

/*
 * Directories Docker's init layer creates above the image in every
 * container (0755 root). Whether the image's mode or the init layer's
 * shows depends on the storage driver: the image's is never relied on.
 */
#define SEALED_INIT_DIRS(_) \
	_("") _("etc") _("dev") _("dev/pts") _("dev/shm") _("proc") _("sys")

/* Paths that are not image content: Docker provides them in every container. */
#define SEALED_NOT_IMAGE(_) \
	_("/etc/hosts") _("/etc/hostname") _("/etc/resolv.conf") _("/etc/mtab") _("/.dockerenv")

static const char *const init_dirs[] = {
#define SEALED_STR(s) s,
	SEALED_INIT_DIRS(SEALED_STR)
};

static const char *const not_image[] = {
	SEALED_NOT_IMAGE(SEALED_STR)
#undef SEALED_STR
};

/* --- profile.sealed --------------------------------------------------- */

static bool
path_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("._+@=,~-", c) != NULL;
}

/* "/a/b": no empty, "." or ".." part, no trailing slash, plain characters. */
static bool
path_normal(const char *s)
{
	size_t i, part = 0;

	if (s[0] != '/' || !s[1])
		return false;
	for (i = 1; s[i]; i++) {
		if (s[i] != '/') {
			if (!path_char(s[i]))
				return false;
			part++;
			continue;
		}
		if (part == 0 || (part <= 2 && strspn(s + i - part, ".") == part))
			return false;
		part = 0;
	}
	return part > 0 && !(part <= 2 && strspn(s + i - part, ".") == part);
}

/* NULL when s may be sealed, else why not. */
static const char *
path_refusal(const char *s)
{
	size_t i;

	if (strlen(s) > SEALED_PATH_LEN_MAX)
		return "longer than 255 bytes";
	if (!path_normal(s))
		return "not an absolute normalised path of [A-Za-z0-9._+@=,~-] parts";
	if (path_within(s, "/proc") || path_within(s, "/sys") ||
	    path_within(s, "/dev"))
		return "not image content (the kernel's or Docker's own mount)";
	for (i = 0; i < sizeof not_image / sizeof not_image[0]; i++)
		if (strcmp(s, not_image[i]) == 0)
			return "not image content (Docker provides it in every container)";
	return NULL;
}

int
sealed_paths_parse(struct strv *dst, const json_t *v, struct al_err *err)
{
	const char *why;
	json_t *s;
	size_t i, j;

	if (!json_is_array(v) || json_array_size(v) > SEALED_PATHS_MAX)
		return al_fail(err, "profile.sealed: expected an array of at most %d paths",
			       SEALED_PATHS_MAX);
	strv_free(dst);
	dst->set = true;
	json_array_foreach(v, i, s) {
		if (!json_is_string(s) || strlen(json_string_value(s)) != json_string_length(s))
			return al_fail(err, "profile.sealed[%zu]: expected a string without NUL", i);
		if ((why = path_refusal(json_string_value(s))))
			return al_fail(err, "profile.sealed[%zu]: %s", i, why);
		for (j = 0; j < dst->n; j++)
			if (strcmp(dst->v[j], json_string_value(s)) == 0)
				return al_fail(err, "profile.sealed[%zu]: listed twice", i);
		if (strv_push(dst, json_string_value(s)) < 0)
			return al_fail(err, "profile.sealed: out of memory");
	}
	return 0;
}

/* --- which entries matter --------------------------------------------- */

/* rel is "" (the root) or "a/b"; a sealed path is "/a/b". */
static bool
rel_above_or_at(const char *rel, const char *sealed_rel)
{
	return !rel[0] || path_within(sealed_rel, rel);
}

bool
sealed_relevant(const struct strv *sealed, const char *rel)
{
	size_t i;

	for (i = 0; i < sealed->n; i++) {
		const char *s = sealed->v[i] + 1;

		if (rel_above_or_at(rel, s) || path_within(rel, s))
			return true;
	}
	return false;
}

/* The whiteout kind of a normalised name, and the path it acts on in *target. */
static enum sealed_kind
whiteout_kind(const char *path, char *target, size_t cap)
{
	const char *base = strrchr(path, '/');
	size_t dir = base ? (size_t)(base - path) : 0;

	base = base ? base + 1 : path;
	snprintf(target, cap, "%s", path);
	if (strncmp(base, WHITEOUT, sizeof WHITEOUT - 1) != 0)
		return SEALED_ENTRY;
	if (strcmp(base, OPAQUE) == 0) {
		target[dir] = '\0';
		return SEALED_OPAQUE;
	}
	snprintf(target + (base - path), cap - (size_t)(base - path), "%s",
		 base + sizeof WHITEOUT - 1);
	return SEALED_WHITEOUT;
}

static int
layer_push(struct sealed_layer *l, const struct sealed_entry *e)
{
	struct sealed_entry *v;
	size_t cap;

	if (l->n == l->cap) {
		cap = l->cap ? l->cap * 2 : 16;
		if (!(v = realloc(l->v, cap * sizeof *v)))
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *e;
	return 0;
}

int
sealed_layer_add(struct sealed_layer *l, const struct tar_entry *e,
		 const struct strv *sealed, size_t *budget, struct al_err *err)
{
	char norm[TAR_PATH_MAX], target[TAR_PATH_MAX], link[TAR_PATH_MAX];
	struct sealed_entry s = { .type = e->type, .mode = e->mode, .uid = e->uid,
				  .gid = e->gid, .acl = e->acl, .xattrs = e->xattrs };

	if (e->xattrs & TAR_XATTR_OVERLAY)
		return al_fail(err, "image layer: an entry carries an overlayfs attribute "
			       "(trusted.overlay.* or user.overlay.* changes what the layers show)");
	if (tar_path_normalise(e->path, norm, sizeof norm) < 0)
		return al_fail(err, "image layer: an entry name has a \"..\" part");
	s.kind = whiteout_kind(norm, target, sizeof target);
	if (e->type == '1' && tar_path_normalise(e->link, link, sizeof link) < 0)
		return al_fail(err, "image layer: a hard link target has a \"..\" part");
	if (s.kind == SEALED_ENTRY && e->type == '1' && !e->link[0])
		return al_fail(err, "image layer: a hard link without a target");
	if (!sealed_relevant(sealed, target) &&
	    !(s.kind == SEALED_ENTRY && e->type == '1' && sealed_relevant(sealed, link)))
		return 0;
	if (e->uid >= ID_NONE || e->gid >= ID_NONE)
		return al_fail(err, "image layer: a uid or gid past 32 bits (chown keeps the low 32) "
			       "on an entry bearing on a sealed path");
	if (*budget == 0)
		return al_fail(err, "image layers: more than %u entries bear on sealed paths",
			       SEALED_ENTRIES_MAX);
	s.path = strdup(target);
	s.link = s.kind == SEALED_ENTRY && e->type == '1' ? strdup(link) : NULL;
	if (!s.path || (e->type == '1' && s.kind == SEALED_ENTRY && !s.link) ||
	    layer_push(l, &s) < 0) {
		free(s.path);
		free(s.link);
		return al_fail(err, "image layers: out of memory");
	}
	(*budget)--;
	return 0;
}

void
sealed_layer_free(struct sealed_layer *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].link);
		free(l->v[i].digest);
	}
	free(l->v);
	free(l->name);
	memset(l, 0, sizeof *l);
}

/* --- who -------------------------------------------------------------- */

static int
parse_id(const char *s, size_t n, uint64_t *out)
{
	uint64_t v;

	if (bytes_decimal(s, n, 10, &v) < 0 || v > UINT32_MAX)
		return -1;
	*out = v;
	return 0;
}

int
sealed_who_parse(const char *user, const json_t *group_add, struct sealed_who *w,
		 struct al_err *err)
{
	const char *colon = user ? strchr(user, ':') : NULL;
	const json_t *g;
	size_t i;

	memset(w, 0, sizeof *w);
	if (!colon || parse_id(user, (size_t)(colon - user), &w->uid) < 0 ||
	    parse_id(colon + 1, strlen(colon + 1), &w->gids[0]) < 0)
		return al_fail(err, "user is not a numeric uid:gid");
	w->n_gids = 1;
	if (!json_is_null(group_add) && !json_is_array(group_add))
		return al_fail(err, "GroupAdd is not a list");
	json_array_foreach(group_add, i, g) {
		const char *s = json_string_value(g);

		if (w->n_gids == SEALED_GROUPS_MAX)
			return al_fail(err, "more than %d groups", SEALED_GROUPS_MAX);
		if (!s || parse_id(s, strlen(s), &w->gids[w->n_gids]) < 0)
			return al_fail(err, "GroupAdd holds a group that is not numeric");
		w->n_gids++;
	}
	return 0;
}

/* --- a string set ------------------------------------------------------ */

struct slot {
	const char *key;
	const struct sealed_entry *e;
};

struct map {
	struct slot *s;
	size_t cap;	/* a power of two */
};

static uint64_t
hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int
map_init(struct map *m, size_t n)
{
	m->cap = 16;
	while (m->cap < 2 * n + 16)
		m->cap *= 2;
	m->s = calloc(m->cap, sizeof *m->s);
	return m->s ? 0 : -1;
}

static struct slot *
map_slot(const struct map *m, const char *key)
{
	size_t i = (size_t)hash_str(key) & (m->cap - 1);

	while (m->s[i].key && strcmp(m->s[i].key, key) != 0)
		i = (i + 1) & (m->cap - 1);
	return &m->s[i];
}

static const struct sealed_entry *
map_get(const struct map *m, const char *key)
{
	return map_slot(m, key)->e;
}

/* The first entry put for a key stays (the map holds at most cap / 2). */
static void
map_put(struct map *m, const char *key, const struct sealed_entry *e)
{
	struct slot *s = map_slot(m, key);

	if (!s->key) {
		s->key = key;
		s->e = e;
	}
}

/* --- layers applied ---------------------------------------------------- */

struct view {
	struct map visible;	/* path → the entry the container shows */
	struct map whiteout, opaque, nondir;	/* masks from the layers above */
};

static bool
is_dir(const struct sealed_entry *e)
{
	return e->type == '5';
}

/* Hidden by a layer above: a whiteout at or above it, an opaque or non-directory above it. */
static bool
masked(const struct view *v, const char *path)
{
	char buf[TAR_PATH_MAX];
	size_t i, n = strlen(path);

	if (map_get(&v->whiteout, path))
		return true;
	if (n >= sizeof buf)
		return true;
	memcpy(buf, path, n + 1);
	for (i = n; i-- > 0;) {
		if (buf[i] != '/')
			continue;
		buf[i] = '\0';
		if (map_get(&v->whiteout, buf) || map_get(&v->opaque, buf) || map_get(&v->nondir, buf))
			return true;
	}
	/* The root is above every other entry. */
	return n > 0 && map_get(&v->opaque, "");
}

static void
apply_layer(struct view *v, const struct sealed_layer *l)
{
	const struct sealed_entry *e;
	size_t i;

	for (i = l->n; i-- > 0;) {
		e = &l->v[i];
		if (e->kind == SEALED_ENTRY && !map_get(&v->visible, e->path) && !masked(v, e->path))
			map_put(&v->visible, e->path, e);
	}
	for (i = 0; i < l->n; i++) {
		e = &l->v[i];
		if (e->kind == SEALED_WHITEOUT)
			map_put(&v->whiteout, e->path, e);
		else if (e->kind == SEALED_OPAQUE)
			map_put(&v->opaque, e->path, e);
		else if (!is_dir(e))
			map_put(&v->nondir, e->path, e);
	}
}

static int
view_build(struct view *v, const struct sealed_layer *const *layers, size_t n)
{
	size_t i, total = 0;

	for (i = 0; i < n; i++)
		total += layers[i]->n;
	memset(v, 0, sizeof *v);
	if (map_init(&v->visible, total) < 0 || map_init(&v->whiteout, total) < 0 ||
	    map_init(&v->opaque, total) < 0 || map_init(&v->nondir, total) < 0)
		return -1;
	for (i = n; i-- > 0;)
		apply_layer(v, layers[i]);
	return 0;
}

static void
view_free(struct view *v)
{
	free(v->visible.s);
	free(v->whiteout.s);
	free(v->opaque.s);
	free(v->nondir.s);
}

/* --- permissions ------------------------------------------------------- */

#define MAY_READ	4
#define MAY_SEARCH	1

/* What a directory is in the container: the init layer's, the image's, or the default. */
struct meta {
	char type;
	unsigned mode;
	uint64_t uid, gid;
	unsigned xattrs;
};

static const struct meta dir_default = { '5', DIR_DEFAULT, 0, 0, 0 };

/* Extended attributes that may grant or deny what the mode says, unjudged here. */
static const struct {
	unsigned bit;
	const char *what;
} unjudged[] = {
	{ TAR_XATTR_ACL,	"a POSIX ACL (modes alone cannot judge it)" },
	{ TAR_XATTR_SYSTEM,	"a system.* xattr (airlock cannot judge it)" },
	{ TAR_XATTR_SECURITY,	"a security.* xattr (airlock cannot judge it)" },
};

/* What of xattrs (enum tar_xattr bits) cannot be judged, or NULL. */
static const char *
unjudged_of(unsigned xattrs)
{
	size_t i;

	for (i = 0; i < sizeof unjudged / sizeof unjudged[0]; i++)
		if (xattrs & unjudged[i].bit)
			return unjudged[i].what;
	return NULL;
}

static bool
init_dir(const char *path)
{
	size_t i;

	for (i = 0; i < sizeof init_dirs / sizeof init_dirs[0]; i++)
		if (strcmp(path, init_dirs[i]) == 0)
			return true;
	return false;
}

static struct meta
meta_of(const struct view *v, const char *path)
{
	const struct sealed_entry *e = map_get(&v->visible, path);
	struct meta m = dir_default;

	if (e && !init_dir(path)) {
		m.type = e->type;
		m.mode = e->mode;
		m.uid = e->uid;
		m.gid = e->gid;
		m.xattrs = e->xattrs | (e->acl ? TAR_XATTR_ACL : 0);
	}
	return m;
}

static bool
in_groups(const struct sealed_who *w, uint64_t gid)
{
	size_t i;

	for (i = 0; i < w->n_gids; i++)
		if (w->gids[i] == gid)
			return true;
	return false;
}

/* Exactly one class of bits applies, the owner's first. */
static bool
may(const struct sealed_who *w, uint64_t uid, uint64_t gid, unsigned mode, unsigned want)
{
	unsigned bits;

	if (uid == w->uid)
		bits = mode >> 6;
	else if (in_groups(w, gid))
		bits = mode >> 3;
	else
		bits = mode;
	return (bits & want) == want;
}

static bool
meta_may(const struct sealed_who *w, const struct meta *m, unsigned want)
{
	return may(w, m->uid, m->gid, m->mode, want);
}

/* --- judging ----------------------------------------------------------- */

struct judge {
	const struct view *v;
	const struct sealed_who *who;
	const char *sealed;	/* "/a/b", as configured */
	struct sealed_verdict *out;
};

static bool
refuse(struct judge *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool
refuse(struct judge *j, const char *fmt, ...)
{
	char why[SEALED_TEXT_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	j->out->pass = false;
	snprintf(j->out->text, sizeof j->out->text, "%.80s: %.110s", j->sealed, why);
	return false;
}

/* One directory above the sealed path: a symlink or a non-directory refuses. */
static bool
parent_ok(struct judge *j, const char *dir, bool *open)
{
	struct meta m = meta_of(j->v, dir);
	const char *x = unjudged_of(m.xattrs);

	if (x)
		return refuse(j, "a parent carries %s", x);
	if (m.type == '2')
		return refuse(j, "a parent directory is a symlink (name the real path)");
	if (m.type != '5')
		return refuse(j, "a parent is not a directory");
	if (!meta_may(j->who, &m, MAY_SEARCH))
		*open = false;
	return true;
}

/*
 * The directories from the root down to rel's parent; *open says whether
 * the agent may search all of them.
 */
static bool
walk_parents(struct judge *j, const char *rel, bool *open)
{
	char buf[TAR_PATH_MAX];
	size_t i, n = strlen(rel);
	bool ok;

	*open = true;
	if (n >= sizeof buf)
		return refuse(j, "name too long");
	memcpy(buf, rel, n + 1);
	if (!parent_ok(j, "", open))
		return false;
	for (i = 0; i < n; i++) {
		if (buf[i] != '/')
			continue;
		buf[i] = '\0';
		ok = parent_ok(j, buf, open);
		buf[i] = '/';
		if (!ok)
			return false;
	}
	return true;
}

/* "it" for the sealed path itself reads better left out: "/a: readable by …". */
static const char *
subject(const char *what)
{
	return what[0] ? what : "it";
}

/* Refusals common to the sealed path and everything under it. */
static bool
judge_entry_fixed(struct judge *j, const struct sealed_entry *e, const char *what)
{
	const char *x = unjudged_of(e->xattrs | (e->acl ? TAR_XATTR_ACL : 0));

	if (x)
		return refuse(j, "%s carries %s", subject(what), x);
	if (e->uid == j->who->uid)
		return refuse(j, "%s%sowned by the agent's uid %" PRIu64, what,
			      what[0] ? " " : "", j->who->uid);
	return true;
}

static bool
judge_readable(struct judge *j, const struct sealed_entry *e, const char *what)
{
	if (!may(j->who, e->uid, e->gid, e->mode, MAY_READ))
		return true;
	return refuse(j, "%s%sreadable by %" PRIu64 ":%" PRIu64 " (mode %04o, owner %" PRIu64
		      ":%" PRIu64 ")", what, what[0] ? " " : "", j->who->uid, j->who->gids[0],
		      e->mode, e->uid, e->gid);
}

static size_t
depth_below(const char *path, size_t top_len)
{
	size_t d = 0;

	for (path += top_len; *path; path++)
		d += *path == '/';
	return d;
}

/*
 * An entry under the sealed directory: reachable when every directory from
 * the sealed one down to its parent grants search. Its name is not shown.
 */
static bool
judge_below(struct judge *j, const struct sealed_entry *e, const char *top)
{
	char what[64], buf[TAR_PATH_MAX];
	size_t i, tn = strlen(top), n = strlen(e->path);
	struct meta m;

	snprintf(what, sizeof what, "an entry %zu level%s below,", depth_below(e->path, tn),
		 depth_below(e->path, tn) == 1 ? "" : "s");
	memcpy(buf, e->path, n + 1);
	for (i = tn; i < n; i++) {
		if (buf[i] != '/')
			continue;
		buf[i] = '\0';
		m = meta_of(j->v, buf);
		buf[i] = '/';
		if (!meta_may(j->who, &m, MAY_SEARCH))
			return true;	/* unreachable: its mode does not matter */
	}
	if (e->type == '2')
		return refuse(j, "%s a symlink, readable", what);
	return judge_readable(j, e, what);
}

/* Every visible entry of every layer, once. */
struct each {
	const struct sealed_layer *const *layers;
	size_t n;
};

static bool
judge_tree(struct judge *j, const struct each *all, const char *top, bool open)
{
	const struct sealed_entry *e;
	size_t l, i;

	for (l = 0; l < all->n; l++)
		for (i = 0; i < all->layers[l]->n; i++) {
			e = &all->layers[l]->v[i];
			if (e->kind != SEALED_ENTRY || map_get(&j->v->visible, e->path) != e)
				continue;
			if (e->type == '1' && path_within(e->path, top) != path_within(e->link, top))
				return refuse(j, "a hard link joins a name inside it to one outside");
			if (!path_within(e->path, top) || strcmp(e->path, top) == 0)
				continue;
			if (!judge_entry_fixed(j, e, "an entry below,"))
				return false;
			if (open && !judge_below(j, e, top))
				return false;
		}
	return true;
}

static bool
judge_one(struct judge *j, const struct each *all)
{
	const char *rel = j->sealed + 1;
	const struct sealed_entry *e;
	bool open;

	if (!walk_parents(j, rel, &open))
		return false;
	e = map_get(&j->v->visible, rel);
	if (!e)
		return refuse(j, "not in the image");
	if (e->type == '2')
		return refuse(j, "is a symlink (name the real path)");
	if (init_dir(rel))
		return refuse(j, "Docker's init layer makes it 0755 root in every container");
	if (!judge_entry_fixed(j, e, ""))
		return false;
	if (open && !judge_readable(j, e, ""))
		return false;
	/* Below a file only the hard-link rule applies. */
	return judge_tree(j, all, rel, open && is_dir(e) &&
			  may(j->who, e->uid, e->gid, e->mode, MAY_SEARCH));
}

void
sealed_file_of(const struct sealed_layer *const *layers, size_t n, const char *rel,
	       struct sealed_file *out)
{
	const struct sealed_entry *e;
	struct view v;

	memset(out, 0, sizeof *out);
	if (view_build(&v, layers, n) < 0) {
		snprintf(out->text, sizeof out->text, "out of memory judging the image");
		view_free(&v);
		return;
	}
	out->read = true;
	e = map_get(&v.visible, rel);
	if (e) {
		out->present = true;
		out->type = e->type;
		out->mode = e->mode;
		out->uid = e->uid;
		out->gid = e->gid;
		if (e->digest && (e->type == '0' || e->type == '7'))
			snprintf(out->digest, sizeof out->digest, "%s", e->digest);
	}
	view_free(&v);
}

void
sealed_judge(const struct sealed_layer *const *layers, size_t n,
	     const struct strv *sealed, const struct sealed_who *who,
	     struct sealed_verdict *out)
{
	struct each all = { layers, n };
	struct judge j = { NULL, who, NULL, out };
	struct view v;
	size_t i;

	out->pass = false;
	if (view_build(&v, layers, n) < 0) {
		snprintf(out->text, sizeof out->text, "out of memory judging the image");
		view_free(&v);
		return;
	}
	j.v = &v;
	out->pass = true;
	for (i = 0; i < sealed->n && out->pass; i++) {
		j.sealed = sealed->v[i];
		judge_one(&j, &all);
	}
	if (out->pass)
		snprintf(out->text, sizeof out->text, "%zu sealed, none readable by %" PRIu64 ":%"
			 PRIu64 " (+%zu groups)", sealed->n, who->uid, who->gids[0], who->n_gids - 1);
	view_free(&v);
}
