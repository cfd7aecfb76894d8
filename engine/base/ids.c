#include "ids.h"
#include "hash.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

int
id_draw(void *raw, size_t n)
{
	unsigned char *p = raw;
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = getrandom(p + got, n - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

int
id_hex(char *out, size_t cap, const char *prefix, const void *raw, size_t bytes)
{
	size_t plen = strlen(prefix);

	if (cap > 0)
		out[0] = '\0';
	if (plen + 2 * bytes + 1 > cap)
		return -1;
	memcpy(out, prefix, plen);
	hash_hex(raw, bytes, out + plen);
	return 0;
}

int
id_random(char *out, size_t cap, const char *prefix, size_t bytes)
{
	unsigned char raw[32];

	if (cap > 0)
		out[0] = '\0';
	if (bytes > sizeof raw || strlen(prefix) + 2 * bytes + 1 > cap)
		return -1;
	if (id_draw(raw, bytes) < 0)
		return -1;
	return id_hex(out, cap, prefix, raw, bytes);
}

/* ---- a session by what the operator typed ---- */

void
id_pick_init(struct id_pick *k, const char *typed)
{
	*k = (struct id_pick){ .typed = typed ? typed : "" };
}

static bool
id_starts(const char *id, const char *p, size_t n)
{
	return strncmp(id, p, n) == 0;
}

void
id_pick_offer(struct id_pick *k, const char *id, size_t i)
{
	size_t n = strlen(k->typed), pre = strlen(ID_SESSION_PREFIX);

	if (n == 0 || k->exact)
		return;
	if (strcmp(id, k->typed) == 0) {
		k->exact = true;
		k->matches = 1;
		k->at = i;
	} else if (id_starts(id, k->typed, n) ||
		   (id_starts(id, ID_SESSION_PREFIX, pre) && id_starts(id + pre, k->typed, n))) {
		k->matches++;
		k->at = i;
	}
}

int
id_pick_done(const struct id_pick *k, char *why, size_t cap)
{
	if (k->matches == 1)
		return 0;
	if (k->matches == 0)
		snprintf(why, cap, "no session id starts with '%.40s'", k->typed);
	else
		snprintf(why, cap, "ambiguous session id prefix '%.40s': %zu sessions match",
			 k->typed, k->matches);
	return -1;
}
