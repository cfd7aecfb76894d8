/*
 * The example agent: what an agent under airlock looks like from inside.
 * It reads the session's initial frame (one JSON line on stdin), then asks
 * for one operation every two seconds over the bridge (one JSON line on
 * stdout, its answer one line on stdin): "remember" a note about its step,
 * named by when it started and the step ("1765100000-step-3"): a session
 * started again adds new notes, so its upstream's memory file keeps growing.
 * It stops when stdin ends or an answer says the engine is done with it.
 * No network, no files: its stdio is the only channel it has.
 *
 * Built static for a FROM scratch image by examples/make.sh.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES	65536

static char line[LINE_MAX_BYTES];
static long long started;	/* seconds since the epoch: this run's notes apart */

/* One request out, its answer in; 0 while the session goes on. */
static int
remember(unsigned step)
{
	printf("{\"operation\":\"remember\",\"arguments\":{\"entities\":[{\"name\":\"%lld-step-%u\","
	       "\"entityType\":\"note\",\"observations\":[\"the example agent's step %u\"]}]}}\n",
	       started, step, step);
	if (fflush(stdout) != 0 || !fgets(line, sizeof line, stdin))
		return -1;
	fprintf(stderr, "agent: step %u %s\n", step,
		strstr(line, "\"allowed\":true") ? "allowed" : "refused");
	return 0;
}

int
main(void)
{
	unsigned step;

	if (!fgets(line, sizeof line, stdin))	/* the initial frame: what it was given */
		return 1;
	started = (long long)time(NULL);
	for (step = 1; remember(step) == 0; step++)
		sleep(2);
	return 0;
}
