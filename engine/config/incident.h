#ifndef AIRLOCK_INCIDENT_H
#define AIRLOCK_INCIDENT_H

/*
 * A prepared incident policy, the file the console's `:apply FILE` posts:
 *
 *	{"revoke": ["tool", …], "hold": ["tool", …], "restore": ["tool", …],
 *	 "why": {"tool": "text", …}}
 *
 * and nothing else. A hold makes each call of the tool wait for an
 * operator (ctl hold), so a prepared response can put a tool under
 * review instead of cutting it off. "why" is optional and changes nothing: a note for the
 * operator who reads the file (`airlock audit propose` writes one a tool,
 * saying which denials it came from). It is still checked: each key a tool
 * the lists name, each value a string of at most INCIDENT_WHY_MAX bytes
 * without control characters. Which tools to cut over is policy, so it is read here
 * and not in the console; the console only asks and posts the cutovers.
 * Pure but for the bounded file read: no curses, no supervisor.
 */

#include <stddef.h>

#include <jansson.h>

#include "err.h"
#include "snapshot.h"

#define INCIDENT_TOOLS_MAX	32		/* cutovers one file may ask for */
#define INCIDENT_FILE_MAX	(64 * 1024)	/* far more than INCIDENT_TOOLS_MAX names */
#define INCIDENT_WHY_MAX	200		/* bytes of one "why" note */

/* Every shape but the one above is refused with this, fixed, message. */
#define INCIDENT_SHAPE_ERROR	"expected {\"revoke\", \"hold\", \"restore\": [tools]}"

/*
 * The cutovers: revokes, then holds, then restores, each list in file
 * order (repeats kept: a tool in two lists ends as the later one says).
 */
struct incident {
	size_t n;
	char tool[INCIDENT_TOOLS_MAX][SNAP_NAME_MAX];
	enum cutover_op op[INCIDENT_TOOLS_MAX];
};

/*
 * The cutovers root asks for. -1 with err set to INCIDENT_SHAPE_ERROR, then
 * ": " and what is wrong (fixed words, the file's key or tool name), when
 * root is not that shape: another key, a list that is not one, a name that
 * is not a string, empty or longer than a tool name, more than
 * INCIDENT_TOOLS_MAX names, no name at all, or a "why" that is not an
 * object of notes on the tools named (see above).
 */
int incident_from_json(const json_t *root, struct incident *inc, struct al_err *err);

/*
 * The same for the file at path, read by config_read_json (bounded, no
 * FIFO waits, duplicate keys refused). -1 with err set to the reader's
 * reason ("cannot open: …", "not a regular file") or the shape error; the
 * path is the caller's to add.
 */
int incident_load(const char *path, struct incident *inc, struct al_err *err);

#endif
