/*
 * The control protocol's codec on a full snapshot: N session rows (each
 * with its lease, counters and tools filled) written as JSON, put on one
 * line, read back and decoded into rows, as `serve` and an attached console
 * do for every whole snapshot. The baseline is jansson alone on the same
 * JSON (dump the object, load the line): what the field tables cost on top.
 *
 *	bench: control_snapshot baseline=X airlock=Y ratio=R unit=us rows=N
 *
 * usage: control_bench [ROWS] [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bench.h"
#include "control.h"

#define LINE_MAX_BYTES	(64u << 20)

static void
fill(struct supervisor_snapshot *s, size_t n)
{
	s->rows = calloc(n, sizeof *s->rows);
	if (!s->rows)
		exit(1);
	s->n = s->cap = s->live = n;
	s->generation = 7;
	s->revision = 3;
	for (size_t i = 0; i < n; i++) {
		struct session_row *r = &s->rows[i];

		snprintf(r->id, sizeof r->id, "s-%016zx", i * 2654435761u);
		snprintf(r->container, sizeof r->container, "%064zx", i);
		snprintf(r->image, sizeof r->image, "sha256:%056zx", i);
		snprintf(r->runtime, sizeof r->runtime, "%s", i % 2 ? "runsc" : "runc");
		snprintf(r->class_name, sizeof r->class_name, "confidential");
		r->state = SESSION_STATE_RUNNING;
		r->started_ms = 1764900000000 + (int64_t)i;
		r->uptime_ms = 1000 * (int64_t)i;
		r->lease.armed = true;
		r->lease.pulses = r->lease.acks = 100 + i;
		r->counters.calls = r->counters.allowed = 10 + i;
		r->revision = 3;
		r->gate_open = true;
	}
}

/* One whole snapshot through the protocol: encode, one line, parse, decode. */
static double
through_protocol(const struct supervisor_snapshot *s, struct supervisor_snapshot *out)
{
	double t0 = bench_now_us();
	json_t *v = control_snapshot_json(s), *back;
	size_t len;
	char *line = control_line(v, LINE_MAX_BYTES, &len);

	back = json_loadb(line, len, 0, NULL);
	if (!v || !line || !back || control_snapshot_from_json(back, out) < 0)
		exit(1);
	free(line);
	json_decref(v);
	json_decref(back);
	return bench_now_us() - t0;
}

/* The floor: jansson alone dumps and loads the same JSON. */
static double
jansson_alone(const json_t *v)
{
	double t0 = bench_now_us();
	char *line = json_dumps(v, JSON_COMPACT);
	json_t *back = line ? json_loads(line, 0, NULL) : NULL;

	if (!back)
		exit(1);
	free(line);
	json_decref(back);
	return bench_now_us() - t0;
}

static double
median(double *v, size_t n)
{
	bench_sort(v, n);
	return v[n / 2];
}

int
main(int argc, char **argv)
{
	size_t rows = argc > 1 ? strtoul(argv[1], NULL, 10) : 500;
	size_t rounds = argc > 2 ? strtoul(argv[2], NULL, 10) : 50;
	struct supervisor_snapshot s = { 0 }, out = { 0 };
	double *base = calloc(rounds, sizeof *base), *ours = calloc(rounds, sizeof *ours);
	json_t *v;

	if (rows == 0 || rounds == 0 || !base || !ours)
		return 2;
	fill(&s, rows);
	v = control_snapshot_json(&s);
	if (!v)
		return 1;
	for (size_t i = 0; i < rounds; i++) {	/* interleaved: baseline, airlock, … */
		base[i] = jansson_alone(v);
		ours[i] = through_protocol(&s, &out);
		printf("sample: control_snapshot baseline=%.1f airlock=%.1f unit=us\n", base[i], ours[i]);
	}
	if (out.n != rows || strcmp(out.rows[rows - 1].id, s.rows[rows - 1].id) != 0)
		return 1;	/* a codec that lost rows measured nothing */
	double b = median(base, rounds), a = median(ours, rounds);
	printf("bench: control_snapshot baseline=%.1f airlock=%.1f ratio=%.2f unit=us rows=%zu runs=%zu\n",
	       b, a, a / b, rows, rounds);
	json_decref(v);
	free(out.rows);
	free(s.rows);
	free(base);
	free(ours);
	return 0;
}
