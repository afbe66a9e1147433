// SPDX-License-Identifier: GPL-2.0
/*
 * kf_memhog: allocate and touch anonymous memory in 1 MiB steps until the
 * kernel runs out of memory (fixture case 09-oom, with vm.panic_on_oom=1).
 * Built with gcc -static by vmcore_fixtures/build.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	const size_t chunk = 1 << 20;
	size_t total = 0;

	for (;;) {
		char *p = malloc(chunk);

		if (!p) {
			fprintf(stderr, "kf_memhog: malloc failed at %zu MiB\n", total >> 20);
			return 1;
		}
		memset(p, 0xa5, chunk);
		total += chunk;
		if ((total >> 20) % 16 == 0)
			printf("kf_memhog: %zu MiB\n", total >> 20);
		fflush(stdout);
	}
}
