/* No clone3 probe on this architecture: runsc_threads says so (engine/host/doctor_probe.c). */
#include <stddef.h>

const unsigned char seccomp_clone3_probe[] = { 0 };
const size_t seccomp_clone3_probe_len = 0;
