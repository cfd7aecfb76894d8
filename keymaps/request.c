#include "request.h"

#include <stddef.h>
#include <string.h>

/*
 * The request table in enum order, with a title row before each group as
 * tig does it: a row with req == REQ_NONE and only a group title. Walking
 * it keeps the enum, the names, the help text and the groups in one place.
 */
struct req_row {
	enum request req;
	const char *name;
	bool destructive;
	const char *help;
	const char *group;
};

static const struct req_row req_rows[] = {
#define REQ_ROW(e, n, d, h) { REQ_##e, n, d, h, NULL },
#define REQ_GROUP_ROW(g) { REQ_NONE, NULL, false, NULL, g },
	REQ_INFO(REQ_ROW, REQ_GROUP_ROW)
#undef REQ_GROUP_ROW
#undef REQ_ROW
};

#define REQ_ROWS (sizeof req_rows / sizeof req_rows[0])

static const struct req_row *
req_row_of(enum request req)
{
	size_t i;

	if (req <= REQ_NONE || req >= REQ_COUNT)
		return NULL;
	for (i = 0; i < REQ_ROWS; i++)
		if (req_rows[i].req == req)
			return &req_rows[i];
	return NULL;
}

const char *
request_name(enum request req)
{
	const struct req_row *row = req_row_of(req);

	return row ? row->name : NULL;
}

const char *
request_help(enum request req)
{
	const struct req_row *row = req_row_of(req);

	return row ? row->help : NULL;
}

bool
request_destructive(enum request req)
{
	const struct req_row *row = req_row_of(req);

	return row && row->destructive;
}

enum request
request_by_name(const char *name)
{
	size_t i;

	if (!name)
		return REQ_NONE;
	for (i = 0; i < REQ_ROWS; i++)
		if (req_rows[i].name && strcmp(req_rows[i].name, name) == 0)
			return req_rows[i].req;
	return REQ_NONE;
}

const char *
request_group(enum request req)
{
	const char *group = NULL;
	size_t i;

	if (req <= REQ_NONE || req >= REQ_COUNT)
		return NULL;
	for (i = 0; i < REQ_ROWS; i++) {
		if (req_rows[i].group)
			group = req_rows[i].group;
		else if (req_rows[i].req == req)
			return group;
	}
	return NULL;
}
