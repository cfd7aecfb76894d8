#ifndef AIRLOCK_DEMO_IMAGE_H
#define AIRLOCK_DEMO_IMAGE_H

/*
 * The images `airlock console --demo` runs (the console's demo, tui/demo.c,
 * says which sessions): each built once and found again afterwards.
 */

#include <stdbool.h>

#include "err.h"
#include "snapshot.h"

#define DEMO_IMAGE_LABEL	"io.airlock.demo-agent"

/*
 * The fixture agent's image (FROM scratch, the static binary at agent_path
 * as its entrypoint), found again by the label
 * DEMO_IMAGE_LABEL=<sha256 of the binary>, else built now (a few seconds).
 * image: "sha256:<id>"; *built: built by this call.
 */
int demo_image_agent(const char *docker_host, const char *agent_path, char image[SNAP_IMAGE_MAX],
		     bool *built, struct al_err *err);

/*
 * The MCP agent's image, by script (tests/thirdparty/demo_image.sh) given
 * shim, the airlock-shim binary: its one line "sha256:<64 hex>
 * built|reused" into image and *built, within two minutes (killed when
 * later). Returns the script's exit status (0: image set; 77: node or the
 * SDK is not installed), or -1 when it could not run, was killed or said
 * something else.
 */
int demo_image_script(const char *script, const char *shim, char image[SNAP_IMAGE_MAX],
		      bool *built);

#endif
