#ifndef AIRLOCK_TEST_SAMPLE_ENTRY_H
#define AIRLOCK_TEST_SAMPLE_ENTRY_H

#include "audit.h"

/*
 * One allowed call as the gateway audits it, with every field set but the
 * response hash: the audit log's and the OTLP exporter's tests start from
 * it and change the field a test is about.
 */
static inline struct audit_entry
sample_entry(const char *session, const char *rule)
{
	struct audit_entry e = {
		.session_id = session,
		.call_id = "call-0001",
		.type = audit_type_id(AUDIT_T_CALL),
		.tool = "fs.read",
		.decision = "allowed",
		.rule = rule,
		.revision = 7,
		.latency_us = 1234,
		.request_hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		.response_hash = NULL,
		.class_before = "public",
		.class_after = "confidential",
		.detail = "{\"bytes\":12}",
	};

	return e;
}

#endif
