/* SPDX-License-Identifier: MIT */
/* ykclock.c: the one monotonic clock of the project. */
#include <config.h>

#include <time.h>

#include "ykclock.h"

int64_t
yk_mono_ms(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return (int64_t)time(NULL) * 1000;
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
