#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "docker.h"
#include "profile.h"
#include "watchdog.h"

/*
 * Only a container carrying airlock's labels is guarded: run by hand with
 * any other ID, the watchdog would stop a container that is not airlock's.
 * Refused before "ready", so the engine's handshake fails too.
 */
static bool
container_is_airlocks(const char *socket_path, const char *id)
{
	struct al_err err;
	json_t *c = NULL;
	struct docker *d;
	bool ours;

	if (socket_path[0] != '/' || !docker_name_valid(id))
		return false;
	d = docker_open(socket_path, WATCHDOG_STOP_TIMEOUT_MS, &err);
	if (!d || docker_inspect(d, id, &c, &err) < 0) {
		fprintf(stderr, "airlock watchdog: %s\n", d ? err.msg : "cannot reach the daemon");
		docker_close(d);
		return false;
	}
	ours = profile_labels_managed(json_object_get(json_object_get(c, "Config"), "Labels"));
	if (!ours)
		fprintf(stderr, "airlock watchdog: container %.64s does not carry airlock's labels"
			" (" LABEL_MANAGED "); refused\n", id);
	json_decref(c);
	docker_close(d);
	return ours;
}

/*
 * `airlock watchdog SOCKET ID`: the lease process. The engine starts it
 * (fork + exec) with the lease socket as stdin and stdout; it is never
 * run by hand.
 */
int
cmd_watchdog(int argc, char **argv)
{
	struct cli_opts o;
	int rc = cli_parse("watchdog", argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (o.n_positional != 2) {
		fprintf(stderr, "airlock watchdog: internal; started by the engine\n");
		return EXIT_USAGE;
	}
	if (!container_is_airlocks(o.positional[0], o.positional[1]))
		return EXIT_REFUSED;
	return watchdog_main(o.positional[0], o.positional[1]);
}
