#ifndef AIRLOCK_MODEL_H
#define AIRLOCK_MODEL_H

/*
 * What the console knows and where the operator stands in it: the engine's
 * snapshots, the event history, the audit tail, the marks, the current
 * view and each view's selection. Views draw from it (through struct
 * ui_model); the key bar and the dispatcher ask it what the selection
 * targets and which requests that offers, so both always agree. No curses.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "link.h"
#include "request.h"
#include "snapshot.h"
#include "view.h"


#define MODEL_HISTORY_MAX	512	/* events the console keeps for its views */
#define MODEL_AUDIT_MAX		400	/* audit tail rows kept */
#define MODEL_TIMELINE_MAX	2000	/* timeline events kept (the oldest fall out) */
#define MODEL_TIMELINE_PAGES	8	/* pages taken from one engine in one refresh */
#define MODEL_WHY_MAX		192
#define MODEL_STALE_MS		1500	/* a snapshot this old is marked stale */
#define MODEL_LINKS_MAX		8	/* engines one console attaches to */
/*
 * Held calls the console keeps, every engine's together: its own bound,
 * apart from any one engine's board (SNAP_HOLDS_MAX), at least 1024.
 */
#define MODEL_PENDING_MAX	1024
/*
 * The held calls are listed again this often without an event. Events
 * make the list current; this only repairs one lost to a full queue or a
 * dropped push (the engine counts those), so seconds are soon enough, and
 * it costs a list a while whatever the number of engines.
 */
#define MODEL_PENDING_SAFETY_MS	5000

struct model {
	struct supervisor_snapshot snap;	/* every engine's rows, one list */
	bool snap_ok;
	int64_t snap_ms;		/* wall clock of the latest good snapshot */
	struct session_detail *detail;	/* of the session the view acts on, or NULL */
	bool have_detail;
	struct host_snapshot host;
	struct supervisor_event history[MODEL_HISTORY_MAX];	/* a ring */
	size_t hist_head, hist_n;
	struct supervisor_event *hist_flat;	/* the ring oldest first, for views */
	struct audit_row audit_rows[MODEL_AUDIT_MAX];
	size_t n_audit;
	int64_t audit_after[MODEL_LINKS_MAX];	/* each engine's last row taken; -1: none yet */
	char tail_error[MODEL_WHY_MAX];	/* why the tail cannot be read; "" while it can */
	struct timeline_row *timeline;	/* every engine's policy story, oldest first */
	size_t n_timeline;
	uint64_t timeline_dropped;	/* older events no longer kept */
	int64_t timeline_after[MODEL_LINKS_MAX];	/* each engine's cursor (an entry's seq) */
	char timeline_error[MODEL_WHY_MAX];	/* why it cannot be read; "" while it can */
	char marks[UI_MARKS_MAX][SNAP_ID_MAX];
	size_t n_marks;
	enum view_id view;
	struct view_state vs[VIEW_COUNT];
	bool read_only;
	/* The engines: their state, and with more than one, each one's own snapshot. */
	size_t n_links;
	struct link_status link_st[MODEL_LINKS_MAX];
	struct supervisor_snapshot per[MODEL_LINKS_MAX];
	bool link_fresh[MODEL_LINKS_MAX];	/* its latest snapshot came (one engine too) */
	char engine_names[MODEL_LINKS_MAX][SNAP_ENGINE_MAX];
	/*
	 * The calls held for an operator, oldest first: listed again when an
	 * engine says a call began to wait or was decided (its hold events,
	 * whatever made the call wait), when it comes up, and every
	 * MODEL_PENDING_SAFETY_MS in case an event was lost (model_refresh).
	 */
	struct hold_view *pending;
	size_t n_pending;
	char pending_error[MODEL_WHY_MAX];	/* an engine's list cannot be read: why; or "" */
	bool pending_due[MODEL_LINKS_MAX];	/* each engine's list is to be asked for again */
	int64_t pending_ms;			/* monotonic: when the list was last asked for */
};

/* What the current view's selection acts on; either may be empty. */
struct target {
	char session[SNAP_ID_MAX];
	char tool[SNAP_NAME_MAX];
	int64_t hold;			/* a held call's id (the pending view); 0: none */
	unsigned hold_engine;		/* and the engine holding it */
};

int model_init(struct model *m, bool read_only);
void model_free(struct model *m);

/* Into the history (the oldest fall out). */
void model_add_events(struct model *m, const struct supervisor_event *ev, size_t n);

/*
 * The audit tail cannot be read, for why. True the first time (say it
 * once, as an alert); the view says it for as long as it lasts.
 */
bool model_tail_failed(struct model *m, const char *why);

/*
 * Fresh snapshots from every engine (one list; each row and event knows its
 * engine), each engine's new audit rows (through its link), the target's
 * detail. True as model_tail_failed.
 */
bool model_refresh(struct model *m, struct link *const *links, size_t n);

/*
 * Timeline events from engine, in its order: a change's later acks folded
 * into the event held (audit_timeline_fold), a new one placed after every
 * event of a later time from other engines; past MODEL_TIMELINE_MAX the
 * oldest fall out.
 */
void model_add_timeline(struct model *m, unsigned engine, struct timeline_row *rows, size_t n);
/*
 * Into the history, each event marked with the engine it came from; a
 * hold event makes that engine's held calls due to be listed again.
 */
void model_add_engine_events(struct model *m, unsigned engine, struct supervisor_event *ev,
			     size_t n);

/* The engine holding session id (0 when unknown). */
unsigned model_engine_of(const struct model *m, const char *id);

/* What views draw from; ascii is the screen's to set. */
void model_ui(const struct model *m, struct ui_model *out);

/* The selection's target in the current view: its row's, else the session the view shows. */
void model_target(const struct model *m, struct target *t);

/*
 * The request r stands for in the current view: the view's request hook
 * may take it as another, or as nothing to do here (REQ_NONE).
 */
enum request model_request(const struct model *m, enum request r);

/*
 * Is r offered with target t here? If not, why into why[cap] (an error
 * for the status line), or "" when there is nothing to say. The key bar
 * shows what is offered; the dispatcher refuses the rest with why.
 */
bool model_offered(const struct model *m, enum request r, const struct target *t,
		   char *why, size_t cap);

/* The selection moves by delta rows, within the rows there are. */
void model_move(struct model *m, long delta);

/* Show view v (on session, if not NULL); another view starts at its top. */
void model_open(struct model *m, enum view_id v, const char *session);

/* Mark or unmark session. */
void model_toggle_mark(struct model *m, const char *session);

/*
 * The session typed names: its whole id or a unique prefix, with or without
 * "s-" (ids.h, id_pick: the engine's rule and words); NULL with why.
 */
const struct session_row *model_session_pick(const struct model *m, const char *typed,
					     char *why, size_t cap);

/* The row of session id, or NULL. */
const struct session_row *model_session(const struct model *m, const char *id);

/* A live session has the tool in its catalog, or it stands revoked. */
bool model_tool_listed(const struct model *m, const char *tool);
/* The same for any session the engines hold, ended ones too: the engine's own test. */
bool model_tool_held(const struct model *m, const char *tool);

/*
 * Every engine attached gives this console the view role: what would change
 * something is not offered (model_offered says why, in these words).
 */
#define MODEL_VIEW_ONLY	"view only: %s refused"
bool model_view_only(const struct model *m);

#endif
