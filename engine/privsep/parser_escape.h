#ifndef AIRLOCK_PARSER_ESCAPE_H
#define AIRLOCK_PARSER_ESCAPE_H

/*
 * The parser taken over, played by the test build (-DAIRLOCK_MUTANTS,
 * airlock-parser-mutants): PARSE_ESCAPE names the Docker socket, the audit
 * database and the engine's pid, NUL-separated; the parser connects to the
 * socket, opens the database for writing (and appends a byte), attaches to the engine with
 * ptrace and signals it (signal 0), and replies PARSE_ESCAPE_REPORT:
 * "docker=E audit=E ptrace=E signal=E", each E "ok" or the errno's name.
 * The shipped program answers PARSE_FRAME_BAD and tries nothing.
 */

#include <stddef.h>

int parser_escape(const char *body, size_t len);

#endif
