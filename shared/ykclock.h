/* SPDX-License-Identifier: MIT */
/* ykclock.h: the one monotonic clock of the project. */
#ifndef YK_YKCLOCK_H
#define YK_YKCLOCK_H

#include <stdint.h>

/* Milliseconds on the monotonic clock (ages and budgets survive clock
 * steps); the wall clock's, in the same unit, if that clock fails. */
int64_t yk_mono_ms(void);

#endif /* YK_YKCLOCK_H */
