#include "fuzz.h"

#include <string.h>

#include "admission.h"

/*
 * The admission checker (engine/admission/admission.h) over hostile inspect JSON.
 * The input is the container's inspect answer, optionally followed by a
 * NUL byte and the image's (without one, the image checks must refuse).
 * The profile is the default one for the image of the seed corpus. The
 * report must hold exactly one printable item per check, in table order,
 * and admit only when every item passed.
 */

#define FUZZ_IMAGE "sha256:0c88912505e2c6cbb2108b07acd6e30665b153e491259ab2ee8babe6578e567c"

static const char *const ids[] = {
#define ADMISSION_ID(e, id, help) id,
	ADMISSION_CHECKS(ADMISSION_ID)
#undef ADMISSION_ID
};

static void
check_report(const struct check_list *r, bool admitted)
{
	size_t i;

	if (r->oom) {
		FUZZ_CHECK(!admitted);
		return;
	}
	FUZZ_CHECK(r->n == ADMISSION_CHECK_COUNT);
	for (i = 0; i < r->n; i++) {
		FUZZ_CHECK(strcmp(r->items[i].id, ids[i]) == 0);
		FUZZ_CHECK(fuzz_printable(r->items[i].expected));
		FUZZ_CHECK(fuzz_printable(r->items[i].observed));
	}
	FUZZ_CHECK(admitted == check_list_passed(r));
}

static json_t *
load(const uint8_t *data, size_t size)
{
	return json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t csize = nul ? (size_t)(nul - data) : size;
	json_t *container = load(data, csize);
	json_t *image = nul ? load(nul + 1, size - csize - 1) : NULL;
	struct host_facts host = { .cores = 2, .runtime_runc = true, .runtime_runsc = true };
	struct check_list r;
	struct profile p;
	bool admitted;

	profile_defaults(&p);
	snprintf(p.image, sizeof p.image, "%s", FUZZ_IMAGE);
	check_list_init(&r);
	admitted = admission_check(container, image, &p, &host, &r);
	check_report(&r, admitted);
	if (!image)
		FUZZ_CHECK(!admitted);
	check_list_free(&r);
	profile_free(&p);
	json_decref(container);
	json_decref(image);
	return 0;
}
