/*
 * notify_probe COUNT: open a notifier, send COUNT alert lines, close it,
 * and say on stdout what happened, for notify.sh to judge:
 *
 *	libnotify: yes|no	built with it
 *	active: yes|no		after open
 *	sent: TEXT		once per distinct line, in order
 *	dropped: N		lost to a full queue
 *	open_ms / send_ms / close_ms: T
 *
 * The events carry a canary in reason and past the hex of the session id:
 * the script checks that it never reaches the bus.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "airlock-config.h"
#include "alert.h"
#include "notify.h"

#define PROBE_CANARY "CANARY-payload-4242"

static double
probe_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static struct supervisor_event
probe_event(int i)
{
	struct supervisor_event e;

	memset(&e, 0, sizeof e);
	snprintf(e.session, sizeof e.session, "s-3f9a1c02%s", PROBE_CANARY);
	snprintf(e.reason, sizeof e.reason, "%s", PROBE_CANARY);
	switch (i % 3) {
	case 0:
		e.kind = SUPERVISOR_EVENT_LEASE_FAILED;
		snprintf(e.reason, sizeof e.reason, "no ack");
		break;
	case 1:
		e.kind = SUPERVISOR_EVENT_ADMISSION_REFUSED;
		snprintf(e.check, sizeof e.check, "network_mode");
		snprintf(e.reason, sizeof e.reason, "second");
		break;
	default:
		e.kind = SUPERVISOR_EVENT_CUTOVER_ACK;
		snprintf(e.tool, sizeof e.tool, "mail.send");
		e.revision = 7;
		e.result = CUTOVER_REJECTED;
		break;	/* reason stays the canary: shows as "other" */
	}
	return e;
}

int
main(int argc, char **argv)
{
	int count = argc > 1 ? atoi(argv[1]) : 3;
	struct notifier *n;
	double t0, t1, t2, t3;
	int i;

	if (argc > 2 || count < 0 || count > 10000) {
		fprintf(stderr, "usage: notify_probe [COUNT]\n");
		return 2;
	}
	printf("libnotify: %s\n", HAVE_LIBNOTIFY ? "yes" : "no");
	t0 = probe_ms();
	n = notifier_open("airlock-probe");
	t1 = probe_ms();
	printf("active: %s\n", notifier_active(n) ? "yes" : "no");
	for (i = 0; i < count; i++) {
		struct supervisor_event e = probe_event(i);
		char text[ALERT_TEXT_MAX];

		alert_format(&e, text, sizeof text);
		notifier_send(n, text);
		if (i < 3)
			printf("sent: %s\n", text);
	}
	t2 = probe_ms();
	printf("dropped: %lu\n", notifier_dropped(n));
	fflush(stdout);
	notifier_close(n);
	t3 = probe_ms();
	printf("open_ms: %.3f\nsend_ms: %.3f\nclose_ms: %.3f\n", t1 - t0, t2 - t1, t3 - t2);
	return 0;
}
