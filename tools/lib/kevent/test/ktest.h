/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * The tests' few macros: each CHECK prints one TAP line ("ok N what" or
 * "not ok N what"), which the guest's /init counts one by one; the
 * program exits 1 if any failed.
 */
#ifndef KTEST_H
#define KTEST_H

#include <stdio.h>
#include <stdlib.h>

static int ktest_n, ktest_failed;

#define CHECK(cond, ...)						\
	do {								\
		int __ok = !!(cond);					\
									\
		printf("%sok %d ", __ok ? "" : "not ", ++ktest_n);	\
		printf(__VA_ARGS__);					\
		if (__ok)						\
			printf("\n");					\
		else							\
			printf(" (%s:%d: %s)\n", __FILE__, __LINE__,	\
			       #cond);					\
		ktest_failed += !__ok;					\
	} while (0)

/* A check whose failure makes the rest meaningless. */
#define REQUIRE(cond, ...)						\
	do {								\
		CHECK(cond, __VA_ARGS__);				\
		if (!(cond)) {						\
			printf("Bail out!\n");				\
			exit(1);					\
		}							\
	} while (0)

static inline int ktest_done(void)
{
	printf("1..%d\n", ktest_n);
	return ktest_failed ? 1 : 0;
}

#endif /* KTEST_H */
