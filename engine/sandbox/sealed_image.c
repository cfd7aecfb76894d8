#include "sealed_image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/evp.h>

#include "docker.h"
#include "grow.h"
#include "hash.h"
#include "mutant.h"
#include "profile.h"
#include "shim_image.h"

#define BLOCK		512
#define ERROR_BODY_MAX	4096

/* One regular file of the export: a layer tar, a JSON document, or neither. */
struct sealed_blob {
	char *name;			/* normalised */
	char sha[HASH_HEX_LEN + 1];
	unsigned char head[BLOCK];
	size_t head_len;
	bool decided, is_tar, tar_done;
	struct sealed_layer layer;
	char *json;			/* kept while it fits SEALED_JSON_MAX */
	size_t json_len;
};

/* --- digests ----------------------------------------------------------- */

static int
sha_start(struct sealed_export *x)
{
	if (!x->sha && !(x->sha = EVP_MD_CTX_new()))
		return -1;
	return EVP_DigestInit_ex(x->sha, EVP_sha256(), NULL) == 1 ? 0 : -1;
}

static int
sha_end(struct sealed_export *x, char out[HASH_HEX_LEN + 1])
{
	unsigned char d[32];
	unsigned n = 0;

	if (EVP_DigestFinal_ex(x->sha, d, &n) != 1 || n != sizeof d)
		return -1;
	hash_hex(d, sizeof d, out);
	return 0;
}

/* --- the layer inside ---------------------------------------------------- */

/* Is e the watched path, as a regular file? Its data is then hashed. */
static bool
watched(const struct sealed_export *x, const struct tar_entry *e)
{
	char norm[TAR_PATH_MAX];

	return x->watch && (e->type == '0' || e->type == '7') &&
	       tar_path_normalise(e->path, norm, sizeof norm) == 0 && strcmp(norm, x->watch) == 0;
}

static int
inner_entry(void *ctx, const struct tar_entry *e)
{
	struct sealed_export *x = ctx;
	struct sealed_layer *l = &x->cur->layer;
	size_t before = l->n;

	if (e->type == 'S' || e->type == 'V' || e->type == 'M' || e->type == 'N')
		return al_fail(x->err, "image layer: an entry of unsupported tar type %c", e->type);
	if (sealed_layer_add(l, e, &x->keep, &x->budget, x->err) < 0)
		return -1;
	if (l->n == before || !watched(x, e))
		return 0;
	if ((!x->watch_sha && !(x->watch_sha = EVP_MD_CTX_new())) ||
	    EVP_DigestInit_ex(x->watch_sha, EVP_sha256(), NULL) != 1)
		return al_fail(x->err, "image export: out of memory");
	x->watching = true;
	x->watch_index = l->n - 1;
	return 0;
}

static int
inner_data(void *ctx, const unsigned char *p, size_t n)
{
	struct sealed_export *x = ctx;

	if (x->watching && EVP_DigestUpdate(x->watch_sha, p, n) != 1)
		return al_fail(x->err, "image export: digest failed");
	return 0;
}

static int
inner_end(void *ctx)
{
	struct sealed_export *x = ctx;
	struct sealed_entry *e;
	unsigned char d[32];
	unsigned n = 0;

	if (!x->watching)
		return 0;
	x->watching = false;
	e = &x->cur->layer.v[x->watch_index];
	if (EVP_DigestFinal_ex(x->watch_sha, d, &n) != 1 || n != sizeof d ||
	    !(e->digest = malloc(HASH_HEX_LEN + 1)))
		return al_fail(x->err, "image export: digest failed");
	hash_hex(d, sizeof d, e->digest);
	return 0;
}

static const struct tar_stream_ops inner_ops = { inner_entry, inner_data, inner_end };

/* --- the export's entries ---------------------------------------------- */

static int
json_keep(struct sealed_blob *b, const unsigned char *p, size_t n)
{
	char *j;

	if (!b->json)
		return 0;
	if (n > SEALED_JSON_MAX - b->json_len) {
		free(b->json);	/* too large to be ours: never consulted */
		b->json = NULL;
		return 0;
	}
	if (!(j = realloc(b->json, b->json_len + n + 1)))
		return -1;
	memcpy(j + b->json_len, p, n);
	b->json = j;
	b->json_len += n;
	j[b->json_len] = '\0';
	return 0;
}

static bool
looks_like_tar(const unsigned char *h, size_t n)
{
	size_t i;

	if (n < BLOCK)
		return false;
	if (memcmp(h + 257, "ustar", 5) == 0)
		return true;
	for (i = 0; i < BLOCK; i++)
		if (h[i])
			return false;
	return true;	/* an empty layer */
}

/* The first block tells a layer tar from a document. */
static int
decide(struct sealed_export *x, struct sealed_blob *b)
{
	b->decided = true;
	b->is_tar = looks_like_tar(b->head, b->head_len);
	if (!b->is_tar) {
		if (!(b->json = malloc(1)))
			return al_fail(x->err, "image export: out of memory");
		b->json[0] = '\0';
		return json_keep(b, b->head, b->head_len) < 0 ?
			al_fail(x->err, "image export: out of memory") : 0;
	}
	if (tar_stream_init(&x->inner, &inner_ops, x, x->err) < 0)
		return -1;
	return tar_stream_feed(&x->inner, b->head, b->head_len) ? -1 : 0;
}

/* Room for one more blob. Only between entries: x->cur is NULL, x->order unset. */
static int
blobs_grow(struct sealed_export *x)
{
	if (x->n_blobs == SEALED_BLOBS_MAX)
		return al_fail(x->err, "image export: more than %d files", SEALED_BLOBS_MAX);
	if (grow(&x->blobs, &x->cap_blobs, x->n_blobs + 1, sizeof *x->blobs, 16,
		 SEALED_BLOBS_MAX) < 0)
		return al_fail(x->err, "image export: out of memory");
	return 0;
}

static int
outer_entry(void *ctx, const struct tar_entry *e)
{
	struct sealed_export *x = ctx;
	char name[TAR_PATH_MAX];
	struct sealed_blob *b;

	x->cur = NULL;
	if (e->type != '0' && e->type != '7')
		return 0;
	if (blobs_grow(x) < 0)
		return -1;
	if (tar_path_normalise(e->path, name, sizeof name) < 0)
		return al_fail(x->err, "image export: a file name has a \"..\" part");
	b = &x->blobs[x->n_blobs];
	memset(b, 0, sizeof *b);
	if (!(b->name = strdup(name)) || sha_start(x) < 0) {
		free(b->name);
		return al_fail(x->err, "image export: out of memory");
	}
	x->n_blobs++;
	x->cur = b;
	return 0;
}

static int
outer_data(void *ctx, const unsigned char *p, size_t n)
{
	struct sealed_export *x = ctx;
	struct sealed_blob *b = x->cur;
	size_t k;

	if (!b)
		return 0;
	if (EVP_DigestUpdate(x->sha, p, n) != 1)
		return al_fail(x->err, "image export: digest failed");
	while (n > 0 && !b->decided) {
		k = BLOCK - b->head_len < n ? BLOCK - b->head_len : n;
		memcpy(b->head + b->head_len, p, k);
		b->head_len += k;
		p += k;
		n -= k;
		if (b->head_len == BLOCK && decide(x, b) < 0)
			return -1;
	}
	if (n == 0)
		return 0;
	if (b->is_tar)
		return tar_stream_feed(&x->inner, p, n) ? -1 : 0;
	return json_keep(b, p, n) < 0 ? al_fail(x->err, "image export: out of memory") : 0;
}

static int
outer_end(void *ctx)
{
	struct sealed_export *x = ctx;
	struct sealed_blob *b = x->cur;

	x->cur = NULL;
	if (!b)
		return 0;
	if (!b->decided && decide(x, b) < 0)
		return -1;
	if (sha_end(x, b->sha) < 0)
		return al_fail(x->err, "image export: digest failed");
	if (b->is_tar) {
		b->tar_done = tar_stream_done(&x->inner);
		tar_stream_free(&x->inner);
	}
	return 0;
}

static const struct tar_stream_ops outer_ops = { outer_entry, outer_data, outer_end };

int
sealed_export_init(struct sealed_export *x, const struct strv *sealed, struct al_err *err)
{
	size_t i;

	memset(x, 0, sizeof *x);
	x->sealed = sealed;
	x->err = err;
	x->budget = SEALED_ENTRIES_MAX;
	for (i = 0; sealed && i < sealed->n; i++)
		if (strv_push(&x->keep, sealed->v[i]) < 0)
			return al_fail(err, "image export: out of memory");
	return tar_stream_init(&x->outer, &outer_ops, x, err);
}

int
sealed_export_watch(struct sealed_export *x, const char *abs)
{
	if (!abs || abs[0] != '/' || !abs[1] || x->bytes > 0 || x->watch)
		return al_fail(x->err, "image export: cannot watch that path");
	if (strv_push(&x->keep, abs) < 0)
		return al_fail(x->err, "image export: out of memory");
	x->watch = x->keep.v[x->keep.n - 1] + 1;
	return 0;
}

void
sealed_export_free(struct sealed_export *x)
{
	size_t i;

	for (i = 0; x->blobs && i < x->n_blobs; i++) {
		free(x->blobs[i].name);
		free(x->blobs[i].json);
		sealed_layer_free(&x->blobs[i].layer);
	}
	tar_stream_free(&x->inner);
	tar_stream_free(&x->outer);
	EVP_MD_CTX_free(x->sha);
	EVP_MD_CTX_free(x->watch_sha);
	strv_free(&x->keep);
	free(x->blobs);
	free(x->order);
	memset(x, 0, sizeof *x);
}

int
sealed_export_feed(struct sealed_export *x, const unsigned char *p, size_t n)
{
	if (n > SEALED_EXPORT_MAX - x->bytes)
		return al_fail(x->err, "image export: larger than %llu bytes",
			       (unsigned long long)SEALED_EXPORT_MAX);
	x->bytes += n;
	return tar_stream_feed(&x->outer, p, n) ? -1 : 0;
}

/* --- manifest, config, digests ------------------------------------------ */

static struct sealed_blob *
blob_named(struct sealed_export *x, const char *raw)
{
	char name[TAR_PATH_MAX];
	size_t i;

	if (!raw || tar_path_normalise(raw, name, sizeof name) < 0)
		return NULL;
	for (i = 0; i < x->n_blobs; i++)
		if (strcmp(x->blobs[i].name, name) == 0)
			return &x->blobs[i];
	return NULL;
}

static json_t *
blob_json(const struct sealed_blob *b)
{
	return b && b->json ? json_loadb(b->json, b->json_len, JSON_REJECT_DUPLICATES, NULL) : NULL;
}

/* "sha256:<64 hex>" whose hex is the digest we computed. */
static bool
digest_is(const char *want, const char *hex)
{
	return want && strncmp(want, "sha256:", 7) == 0 && strcmp(want + 7, hex) == 0;
}

static int
check_layers(struct sealed_export *x, const json_t *layers, const json_t *diff_ids)
{
	struct sealed_blob *b;
	size_t i, n = json_array_size(layers);

	if (!json_is_array(layers) || !json_is_array(diff_ids) || json_array_size(diff_ids) != n)
		return al_fail(x->err, "image export: the manifest's layers do not match the config's");
	if (!(x->order = calloc(n ? n : 1, sizeof *x->order)))
		return al_fail(x->err, "image export: out of memory");
	for (i = 0; i < n; i++) {
		b = blob_named(x, json_string_value(json_array_get(layers, i)));
		if (!b || !b->is_tar)
			return al_fail(x->err, "image export: layer %zu is not an uncompressed tar in the export", i);
		if (!b->tar_done)
			return al_fail(x->err, "image export: layer %zu is truncated", i);
		if (!digest_is(json_string_value(json_array_get(diff_ids, i)), b->sha))
			return al_fail(x->err, "image export: layer %zu does not match its diff_id", i);
		x->order[i] = &b->layer;
	}
	x->n_order = n;
	return 0;
}

static int
check_config(struct sealed_export *x, const json_t *entry, const char *image_id)
{
	struct sealed_blob *cfg = blob_named(x, json_string_value(json_object_get(entry, "Config")));
	json_t *conf = blob_json(cfg);
	int rc;

	if (!cfg || !digest_is(image_id, cfg->sha))
		rc = al_fail(x->err, "image export: its config is not the image %.19s",
			     image_id ? image_id : "");
	else if (!conf)
		rc = al_fail(x->err, "image export: the config is not JSON");
	else
		rc = check_layers(x, json_object_get(entry, "Layers"),
				  json_object_get(json_object_get(conf, "rootfs"), "diff_ids"));
	json_decref(conf);
	return rc;
}

int
sealed_export_finish(struct sealed_export *x, const char *image_id)
{
	json_t *manifest;
	int rc;

	if (!tar_stream_done(&x->outer))
		return al_fail(x->err, "image export: truncated");
	manifest = blob_json(blob_named(x, "manifest.json"));
	if (!json_is_array(manifest) || json_array_size(manifest) != 1 ||
	    !json_is_object(json_array_get(manifest, 0)))
		rc = al_fail(x->err, "image export: manifest.json missing or not one image");
	else
		rc = check_config(x, json_array_get(manifest, 0), image_id);
	json_decref(manifest);
	return rc;
}

/* --- the Docker call ----------------------------------------------------- */

struct reader {
	CURL *curl;
	struct sealed_export *x;
	long status;
	char body[ERROR_BODY_MAX];
	size_t body_len;
	bool failed;
};

static size_t
reader_write(char *p, size_t size, size_t nmemb, void *ud)
{
	struct reader *r = ud;
	size_t n = size * nmemb, k;

	if (r->status == 0)
		curl_easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, &r->status);
	if (r->status != 200) {
		k = n < sizeof r->body - r->body_len ? n : sizeof r->body - r->body_len;
		memcpy(r->body + r->body_len, p, k);
		r->body_len += k;
		return n;
	}
	if (sealed_export_feed(r->x, (const unsigned char *)p, n) < 0) {
		r->failed = true;
		return 0;
	}
	return n;
}

static int
reader_setup(struct reader *r, const char *socket_path, const char *url, char *errbuf)
{
	CURL *h = r->curl;

	return docker_curl_stream(h, socket_path, url, errbuf, reader_write, r) < 0 ||
	       curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, SEALED_EXPORT_TIMEOUT_MS) ? -1 : 0;
}

static int
reader_result(struct reader *r, CURLcode rc, const char *errbuf, const char *socket_path,
	      struct al_err *err)
{
	char msg[128];

	if (r->failed)
		return -1;	/* the export's own fault, already in err */
	if (rc == CURLE_COULDNT_CONNECT)
		return al_fail(err, "docker: GET /images/{id}/get: cannot connect to %s", socket_path);
	if (rc != CURLE_OK)
		return al_fail(err, "docker: GET /images/{id}/get: %s",
			       errbuf[0] ? errbuf : curl_easy_strerror(rc));
	if (r->status != 200) {
		docker_error_text((const unsigned char *)r->body, r->body_len, msg, sizeof msg);
		return al_fail(err, "docker: GET /images/{id}/get: HTTP %ld%s%s", r->status,
			       msg[0] ? ": " : "", msg);
	}
	return 0;
}

int
sealed_image_read(const char *socket_path, const char *image_id, struct sealed_export *x,
		  struct al_err *err)
{
	struct reader r = { .x = x };
	char errbuf[CURL_ERROR_SIZE] = "", url[160];
	CURLcode rc;
	int ret = -1;

	if (!profile_image_id_valid(image_id))
		return al_fail(err, "image export: not an immutable image ID");
	if (!socket_path)
		socket_path = DOCKER_SOCKET_DEFAULT;
	snprintf(url, sizeof url, "http://localhost/%s/images/%s/get", DOCKER_API_VERSION, image_id);
	if (!(r.curl = curl_easy_init()))
		return al_fail(err, "image export: out of memory");
	if (reader_setup(&r, socket_path, url, errbuf) < 0) {
		al_fail(err, "image export: cannot set up the request");
	} else {
		rc = curl_easy_perform(r.curl);
		ret = reader_result(&r, rc, errbuf, socket_path, err);
	}
	curl_easy_cleanup(r.curl);
	return ret < 0 ? -1 : sealed_export_finish(x, image_id);
}

/* The watched file after finish, or why it was not read. */
static void
shim_of(const struct sealed_export *x, bool read, const char *why, struct sealed_file *out)
{
	if (read) {
		sealed_file_of(x->order, x->n_order, x->watch, out);
		return;
	}
	memset(out, 0, sizeof *out);
	snprintf(out->text, sizeof out->text, "%.*s", SEALED_TEXT_MAX - 1, why);
}

void
sealed_image_judge(const char *socket_path, const json_t *inspect,
		   const struct strv *sealed, bool shim, struct sealed_verdict *out)
{
	const char *image = json_string_value(json_object_get(inspect, "Image"));
	const char *user = json_string_value(json_object_get(json_object_get(inspect, "Config"),
							     "User"));
	const json_t *groups = json_object_get(json_object_get(inspect, "HostConfig"), "GroupAdd");
	struct sealed_export x;
	struct sealed_who who;
	struct al_err err;
	bool read = false, who_ok;

	memset(out, 0, sizeof *out);
	snprintf(out->image, sizeof out->image, "%s", image ? image : "");
	snprintf(out->user, sizeof out->user, "%s", user ? user : "");
	snprintf(out->shim.text, sizeof out->shim.text, "image files not read");
	/* A user the sealed rules cannot judge refuses "sealed"; the shim is still read. */
	who_ok = sealed_who_parse(user, groups ? groups : json_null(), &who, &err) == 0;
	if (!who_ok) {
		snprintf(out->text, sizeof out->text, "%.*s", SEALED_TEXT_MAX - 1, err.msg);
		if (!shim)
			return;
	}
	if (sealed_export_init(&x, sealed, &err) < 0 ||
	    (shim && sealed_export_watch(&x, SHIM_IMAGE_PATH) < 0) ||
	    sealed_image_read(socket_path, image, &x, &err) < 0) {
		if (who_ok)
			snprintf(out->text, sizeof out->text, "%.*s", SEALED_TEXT_MAX - 1, err.msg);
	} else {
		read = true;
		if (who_ok)
			sealed_judge(x.order, x.n_order, sealed, &who, out);
	}
	if (shim)
		shim_of(&x, read, err.msg, &out->shim);
	sealed_export_free(&x);
	/* Test build only: admission lets readable sealed material through. */
	if (mutant("sealed_unchecked")) {
		out->pass = true;
		snprintf(out->text, sizeof out->text, "not judged (mutant sealed_unchecked)");
	}
}
