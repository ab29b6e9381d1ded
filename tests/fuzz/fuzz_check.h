/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/* Invariant checks for the libFuzzer targets: a failed check aborts, which
 * libFuzzer reports as a crash and saves the input. */
#ifndef MRXE_FUZZ_CHECK_H
#define MRXE_FUZZ_CHECK_H

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: invariant failed: %s\n",      \
				__FILE__, __LINE__, #cond);                    \
			abort();                                               \
		}                                                              \
	} while (0)

/* Keep computed values alive so the reads are not optimized away. */
static inline void fuzz_sink(unsigned long long v)
{
	static volatile unsigned long long s;

	s = s ^ v;
}

#endif
