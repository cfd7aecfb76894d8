#include "audit_spool.h"
#include "ids.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

/*
 * The file is written ahead in zeros and synced, a chunk at a time, and
 * records overwrite them in place: a sync that changes no size or extent
 * is a data flush only, where an append would also commit the file
 * system's journal, one commit at a time for every file on it (the shared
 * log's serial flush again). A reader stops at the first NUL.
 */
#define SPOOL_CHUNK	(256 * 1024)

struct audit_spool {
	int fd;
	int64_t k;		/* records written */
	off_t off;		/* where the next record goes */
	off_t size;		/* written ahead to here */
	bool broken;		/* a write failed: nothing more goes in */
	char path[PATH_MAX];
	char *line;		/* the record being written, grown as needed */
	size_t cap;
};

static int write_ahead(struct audit_spool *s, off_t need);

static int
spool_dir(const char *db_path, char dir[PATH_MAX])
{
	return snprintf(dir, PATH_MAX, "%s" AUDIT_SPOOL_SUFFIX, db_path) < PATH_MAX ? 0 : -1;
}

static int
sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* The directory, durable in the log's own directory when it is new. */
static int
make_dir(const char *dir)
{
	char parent[PATH_MAX], *slash;

	if (mkdir(dir, 0700) < 0)
		return errno == EEXIST ? 0 : -1;
	snprintf(parent, sizeof parent, "%s", dir);
	slash = strrchr(parent, '/');
	if (!slash)
		return sync_dir(".");
	if (slash == parent)
		slash[1] = '\0';
	else
		*slash = '\0';
	return sync_dir(parent);
}

int
audit_spool_open(const char *db_path, struct audit_spool **out, struct al_err *err)
{
	char dir[PATH_MAX], name[AUDIT_SPOOL_NAME_LEN + 1];
	struct audit_spool *s;

	if (!db_path || spool_dir(db_path, dir) < 0 || make_dir(dir) < 0 ||
	    id_random(name, sizeof name, "", AUDIT_SPOOL_NAME_LEN / 2) < 0)
		return al_fail(err, "audit: cannot make the session's journal");
	s = calloc(1, sizeof *s);
	if (!s)
		return al_fail(err, "audit: out of memory");
	if (snprintf(s->path, sizeof s->path, "%s/%s", dir, name) >= (int)sizeof s->path)
		goto fail;
	s->fd = open(s->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (s->fd < 0)
		goto fail;
	/* Held for life: recovery leaves a file alone while its writer lives. */
	if (flock(s->fd, LOCK_EX | LOCK_NB) < 0 || write_ahead(s, 0) < 0 || fsync(s->fd) < 0 ||
	    sync_dir(dir) < 0) {
		close(s->fd);
		unlink(s->path);
		goto fail;
	}
	*out = s;
	return 0;
fail:
	free(s);
	return al_fail(err, "audit: cannot make the session's journal");
}

static int
write_all(int fd, const char *p, size_t n, off_t at)
{
	ssize_t w;

	while (n > 0) {
		w = pwrite(fd, p, n, at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		at += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Zeros up to past need (synced by the record's own sync, or the open's). */
static int
write_ahead(struct audit_spool *s, off_t need)
{
	static const char zeros[SPOOL_CHUNK];

	while (s->size <= need) {
		if (write_all(s->fd, zeros, sizeof zeros, s->size) < 0)
			return -1;
		s->size += SPOOL_CHUNK;
	}
	return 0;
}

/* "K ID BODY" in s->line; its length, or 0 when it cannot be made. */
static size_t
record_text(struct audit_spool *s, const char *id, const char *body, size_t len)
{
	size_t need = 24 + AUDIT_ENTRY_ID_MAX + HASH_HEX_LEN + 2 + len + 2;
	char *p;
	int n;

	if (len > AUDIT_SPOOL_LINE_MAX || memchr(body, '\n', len))
		return 0;
	if (need > s->cap) {
		p = realloc(s->line, need);
		if (!p)
			return 0;
		s->line = p;
		s->cap = need;
	}
	n = snprintf(s->line, s->cap, "%" PRId64 " %s ", s->k + 1, id);
	if (n < 0 || (size_t)n + len + 1 > s->cap)
		return 0;
	memcpy(s->line + n, body, len);
	return (size_t)n + len;
}

/*
 * On disk the hash goes between ID and BODY; it covers "K ID BODY", what
 * record_text made, so the record is written as its head, the hash, then
 * the body.
 */
int
audit_spool_put(struct audit_spool *s, const char *id, const char *body, size_t len, bool sync)
{
	char hash[HASH_HEX_LEN + 1], *out;
	size_t n, head;
	int rc;

	if (!s || s->broken || !(n = record_text(s, id, body, len)))
		return -1;
	hash_sha256_hex(s->line, n, hash);
	head = n - len;
	out = malloc(n + HASH_HEX_LEN + 2);
	if (!out)
		return -1;
	memcpy(out, s->line, head);
	memcpy(out + head, hash, HASH_HEX_LEN);
	out[head + HASH_HEX_LEN] = ' ';
	memcpy(out + head + HASH_HEX_LEN + 1, body, len);
	out[n + HASH_HEX_LEN + 1] = '\n';
	rc = write_ahead(s, s->off + (off_t)(n + HASH_HEX_LEN + 2));
	if (rc == 0)
		rc = write_all(s->fd, out, n + HASH_HEX_LEN + 2, s->off);
	free(out);
	if (rc == 0 && sync)
		rc = fdatasync(s->fd);
	if (rc < 0) {
		s->broken = true;	/* a torn record may be there: nothing follows it */
		return -1;
	}
	s->k++;
	s->off += (off_t)(n + HASH_HEX_LEN + 2);
	return 0;
}

void
audit_spool_close(struct audit_spool *s, bool drop)
{
	if (!s)
		return;
	if (drop && !s->broken)
		unlink(s->path);
	close(s->fd);
	free(s->line);
	free(s);
}

/* --- reading back ------------------------------------------------------- */

static bool
is_name(const char *n)
{
	return strlen(n) == AUDIT_SPOOL_NAME_LEN &&
	       strspn(n, "0123456789abcdef") == AUDIT_SPOOL_NAME_LEN;
}

static void
file_bad(struct audit_spool_file *f, int64_t k, const char *why)
{
	if (!f->bad) {
		f->bad_k = k;
		f->bad = why;
	}
}

/* One line, without its newline: a record, or the reason it is not one. */
static const char *
parse_line(char *line, size_t len, int64_t want, struct audit_spool_rec *r)
{
	char *sp1, *sp2, *sp3, *end, hash[HASH_HEX_LEN + 1], *text;
	size_t head;

	sp1 = memchr(line, ' ', len);
	if (!sp1)
		return "journal record unreadable";
	sp2 = memchr(sp1 + 1, ' ', len - (size_t)(sp1 + 1 - line));
	if (!sp2 || sp2 - sp1 - 1 != AUDIT_ENTRY_ID_MAX - 1)
		return "journal record unreadable";
	sp3 = sp2 + 1 + HASH_HEX_LEN;
	if ((size_t)(sp3 - line) >= len || *sp3 != ' ')
		return "journal record unreadable";
	errno = 0;
	r->k = strtoll(line, &end, 10);
	if (end != sp1 || errno)
		return "journal record unreadable";
	if (r->k != want)
		return "journal record missing";
	memcpy(r->id, sp1 + 1, AUDIT_ENTRY_ID_MAX - 1);
	r->id[AUDIT_ENTRY_ID_MAX - 1] = '\0';
	r->len = len - (size_t)(sp3 + 1 - line);
	head = (size_t)(sp2 + 1 - line);
	text = malloc(head + r->len + 1);
	r->body = malloc(r->len + 1);
	if (!text || !r->body) {
		free(text);
		free(r->body);
		r->body = NULL;
		return "journal unreadable";
	}
	memcpy(text, line, head);
	memcpy(text + head, sp3 + 1, r->len);
	hash_sha256_hex(text, head + r->len, hash);
	free(text);
	memcpy(r->body, sp3 + 1, r->len);
	r->body[r->len] = '\0';
	if (memcmp(hash, sp2 + 1, HASH_HEX_LEN) != 0)
		return "journal record altered";
	return NULL;
}

/* All of a file; records up to the first damaged one are kept. */
static int
read_records(struct audit_spool_file *f)
{
	FILE *in;
	char *line = NULL, *nl;
	size_t cap = 0, room = 0;
	ssize_t len;
	const char *why;
	struct audit_spool_rec *p;
	int fd2 = dup(f->fd);

	if (fd2 < 0 || !(in = fdopen(fd2, "r"))) {
		if (fd2 >= 0)
			close(fd2);
		return -1;
	}
	while (!f->bad && (len = getline(&line, &cap, in)) > 0 && line[0] != '\0') {
		nl = memchr(line, '\0', (size_t)len) ? NULL	/* written up to a NUL: torn */
		   : line[len - 1] == '\n' ? line + len - 1 : NULL;
		if (!nl) {
			/* A torn last record: its sync never returned, nothing relied on it. */
			file_bad(f, (int64_t)f->n + 1, "journal record torn");
			break;
		}
		if (f->n >= AUDIT_SPOOL_RECORDS_MAX) {
			file_bad(f, (int64_t)f->n + 1, "journal too long");
			break;
		}
		if (f->n == room) {
			room = room ? 2 * room : 16;
			p = realloc(f->recs, room * sizeof *p);
			if (!p)
				goto fail;
			f->recs = p;
		}
		memset(&f->recs[f->n], 0, sizeof f->recs[0]);
		why = parse_line(line, (size_t)(nl - line), (int64_t)f->n + 1, &f->recs[f->n]);
		if (why) {
			free(f->recs[f->n].body);
			file_bad(f, (int64_t)f->n + 1, why);
			if (strcmp(why, "journal unreadable") == 0)
				goto fail;
			break;
		}
		f->n++;
	}
	free(line);
	fclose(in);
	return 0;
fail:
	free(line);
	fclose(in);
	return -1;
}

static int
by_name(const void *x, const void *y)
{
	return strcmp(((const struct audit_spool_file *)x)->name,
		      ((const struct audit_spool_file *)y)->name);
}

static int
open_one(const char *dir, const char *name, bool exclusive, struct audit_spool_file *f)
{
	char path[PATH_MAX];

	memset(f, 0, sizeof *f);
	snprintf(f->name, sizeof f->name, "%s", name);
	if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
		return -1;
	f->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (f->fd < 0)
		return errno == ENOENT ? 1 : -1;	/* removed meanwhile: its writer is done */
	if (flock(f->fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK)
			return -1;
		f->live = true;
	}
	/* A live writer's file is read too: verify matches what it has written. */
	return read_records(f);
}

int
audit_spool_list(const char *db_path, bool exclusive, struct audit_spool_file **out,
		 size_t *n)
{
	char dir[PATH_MAX];
	struct audit_spool_file *fs = NULL;
	struct dirent *de;
	DIR *d;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (spool_dir(db_path, dir) < 0)
		return -1;
	if (!(d = opendir(dir)))
		return errno == ENOENT ? 0 : -1;
	fs = calloc(AUDIT_SPOOL_FILES_MAX, sizeof *fs);
	if (!fs) {
		closedir(d);
		return -1;
	}
	while (rc >= 0 && (de = readdir(d))) {
		if (!is_name(de->d_name))
			continue;
		if (*n >= AUDIT_SPOOL_FILES_MAX) {
			rc = -1;
			break;
		}
		rc = open_one(dir, de->d_name, exclusive, &fs[*n]);
		if (rc == 1) {
			rc = 0;
			continue;
		}
		(*n)++;
	}
	closedir(d);
	if (rc < 0) {
		audit_spool_list_free(fs, *n);
		*n = 0;
		return -1;
	}
	qsort(fs, *n, sizeof *fs, by_name);
	*out = fs;
	return 0;
}

void
audit_spool_list_free(struct audit_spool_file *f, size_t n)
{
	size_t i, j;

	for (i = 0; f && i < n; i++) {
		for (j = 0; j < f[i].n; j++)
			free(f[i].recs[j].body);
		free(f[i].recs);
		if (f[i].fd >= 0)
			close(f[i].fd);
	}
	free(f);
}

int
audit_spool_remove(const char *db_path, const struct audit_spool_file *f)
{
	char dir[PATH_MAX], path[PATH_MAX];

	if (spool_dir(db_path, dir) < 0 ||
	    snprintf(path, sizeof path, "%s/%s", dir, f->name) >= (int)sizeof path)
		return -1;
	return unlink(path);
}
