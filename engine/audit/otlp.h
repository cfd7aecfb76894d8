#ifndef AIRLOCK_OTLP_H
#define AIRLOCK_OTLP_H

/*
 * Optional OpenTelemetry export: each audit entry becomes one span, sent as
 * OTLP/HTTP JSON (POST <url>/v1/traces) through libcurl. Only an allowlist
 * of audit fields becomes attributes (names, decision, rule, revision,
 * latency, hashes, classes); nothing else can reach a span. An export
 * failure is counted and never stops a session; it is reported with fixed
 * text only. Spans are posted by the exporter's own thread, in order: an
 * export only queues one (up to 1024 waiting; beyond, each is dropped and
 * counted), so a slow or silent collector delays no writer.
 */

#include <stddef.h>

#include "audit.h"
#include "err.h"

struct otlp;

/* url: e.g. "http://127.0.0.1:4318". Each POST has a 2 s timeout. */
int otlp_open(const char *url, struct otlp **out, struct al_err *err);
/* Waits up to 5 s for what is queued to be posted; the rest is dropped, counted. */
void otlp_close(struct otlp *o);

/* Queue one entry as a span. Returns 0, or -1 (not queued: counted in failures). */
int otlp_export(struct otlp *o, const struct audit_entry *e, const char *entry_id);

/* Wait up to timeout_ms until nothing is queued or in flight (sent and failures final). */
void otlp_flush(struct otlp *o, int timeout_ms);

#define OTLP_FAILURE_MAX 160

/*
 * Why the first failed export failed: libcurl's fixed text for its code
 * ("Couldn't connect to server", "SSL connect error", ...) or the
 * collector's HTTP status; "" while none has.
 */
void otlp_first_failure(struct otlp *o, char out[OTLP_FAILURE_MAX]);

size_t otlp_sent(const struct otlp *o);
size_t otlp_failures(const struct otlp *o);

/* The JSON body for one entry (exposed for tests). Caller frees. */
char *otlp_body(const struct audit_entry *e, const char *entry_id);

#endif
