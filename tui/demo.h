#ifndef AIRLOCK_DEMO_H
#define AIRLOCK_DEMO_H

/*
 * `airlock console --demo`: a built-in configuration that keeps the console
 * busy with real sessions against the real daemon. About five sessions are
 * live at once — steady, steady, pester, chaos, mcp (four without node) —
 * each replaced by a fresh one when it ends:
 *
 *   steady  a permitted "save" (notes.append) every second
 *   pester  a "save" and a "publish" (mail.send) every second; the publish
 *           is denied by the sink ceiling (the session is confidential)
 *   chaos   a few saves, then an oversize line, a stall that runs into its
 *           session limit, or a crash
 *
 *   mcp     the official MCP SDK's client (tests/thirdparty/demo_agent.mjs)
 *           under airlock-shim: tools/list, then a call to "save" about
 *           every second, listing again on tools/list_changed; while "save"
 *           is revoked it is not listed, and the agent calls "publish"
 *           (denied) instead. Only when node and the SDK are installed
 *           (tests/thirdparty/demo_image.sh builds its image, or says 77);
 *           otherwise demo_mcp_note says why there is none.
 *
 * and about every 30 s (AIRLOCK_DEMO_LAPSE_S) one steady session's
 * watchdog is paused (SIGSTOP), so the engine stops that container and the
 * session ends watchdog_failed; the paused watchdog is killed once the
 * session has ended.
 *
 * Fixtures: <dir of exe>/tests/agent and <dir of exe>/tests/upstream (the
 * build directory's layout), or $AIRLOCK_DEMO_DIR/agent and
 * $AIRLOCK_DEMO_DIR/upstream when that is set. The images are the
 * engine's to build (engine/sandbox/demo_image.h): the agent's once per
 * agent binary, found again by its label.
 *
 * Order of calls (one thread, the console's; nothing here is thread-safe):
 *
 *   demo_prepare → the engine, its audit log at demo_audit_path →
 *   demo_start with its link → demo_tick about once a second → the
 *   engine shut down → demo_close
 *
 * The demo reaches the engine only through the link (start, forget); the
 * lease lapse pauses a watchdog process, which must be on this host.
 *
 * The demo prints nothing. Its error messages are fixed text with paths
 * and names; the payload (which holds DEMO_CANARY) is only ever written to
 * a file in the demo's private directory, never returned.
 */

#include <stdbool.h>

#include "err.h"
#include "snapshot.h"
#include "supervisor.h"	/* SUPERVISOR_SESSIONS_MAX */

struct link;

#define DEMO_CANARY		"DEMO-SECRET-4929-7731-0458"	/* in the demo payload */
#define DEMO_LAPSE_S_DEFAULT	30
#define DEMO_KEEP_ENDED		12	/* ended sessions kept on screen */

struct demo;

/*
 * Private temp dir (mkdtemp, 0700), the agent image (built when missing:
 * this may take a few seconds), the payload and the configs. exe: the
 * running airlock binary (NULL or a bare name: /proc/self/exe).
 */
int demo_prepare(const char *exe, struct demo **out, struct al_err *err);
/*
 * The demo's audit database, in its temp dir (removed by demo_close); open
 * it, or the log the operator named instead, before the supervisor.
 */
const char *demo_audit_path(const struct demo *d);
/* The first sessions, through l, which must outlive every later demo_tick. */
int demo_start(struct demo *d, struct link *l, struct al_err *err);

/*
 * About once a second with a fresh snapshot: replacements so the
 * roles stay live (after starts that came to nothing, such as refusals
 * while the daemon is gone, one at a time and 2, 4, 8, then every 16 s),
 * forgets ended sessions beyond the newest DEMO_KEEP_ENDED, and the
 * periodic lease lapse. Never blocks on Docker (the local link's start
 * returns at once; it reads one small file).
 */
void demo_tick(struct demo *d, const struct supervisor_snapshot *snap);

/* The MCP agent's image "sha256:…", or "" (then demo_mcp_note says why). */
const char *demo_mcp_image(const struct demo *d, bool *built);
/* Why there is no MCP session (fixed text), or "". */
const char *demo_mcp_note(const struct demo *d);

/* "steady", "pester", "chaos", "mcp", or NULL for a session the demo did not start. */
const char *demo_session_role(const struct demo *d, const char *session_id);
/* The agent image "sha256:…"; *built (if non-NULL): built by this demo_prepare. */
const char *demo_image(const struct demo *d, bool *built);
/* The latest failed start (fixed text with names), or "". */
const char *demo_error(const struct demo *d);

/* After supervisor_shutdown: kills a paused watchdog, removes the temp dir. */
void demo_close(struct demo *d);

#endif
