/* A request loop instrumented with -finstrument-functions, for lttng_ust_cyg_profile (LD_PRELOAD): main calls
 * serve() for each request; serve() calls parse() and reply() (short); request 7 also calls load_model(), which
 * says "fetch model" (lttng_ust_tracef) and spins MODEL_MS (30 ms by default).  The functions' addresses go to ADDRS
 * (non-PIE: they are the addresses lttng_ust_cyg_profile records; now() and spin() are not traced).
 * Usage: calls ADDRS [REQUESTS [MODEL_MS]] */
#define _GNU_SOURCE
#include <lttng/tracef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((no_instrument_function)) static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((no_instrument_function)) static void spin(double seconds) {
    double until = now() + seconds;
    while (now() < until) {
    }
}

__attribute__((noinline)) void parse(int id) { spin(0.0002 + 0.00001 * (id % 3)); }
__attribute__((noinline)) void reply(int id) { spin(0.0003 + 0.00001 * (id % 2)); }
static double model_seconds = 0.030;

__attribute__((noinline)) void load_model(int id) {
    lttng_ust_tracef("fetch model for %d", id);
    spin(model_seconds);
}
__attribute__((noinline)) void serve(int id) {
    parse(id);
    if (id == 7) load_model(id);
    reply(id);
}

int main(int argc, char **argv) {
    int n = argc > 2 ? atoi(argv[2]) : 20;
    if (argc > 3) model_seconds = atoi(argv[3]) / 1000.0;
    FILE *f = fopen(argv[1], "w");
    fprintf(f, "serve 0x%lx\nparse 0x%lx\nreply 0x%lx\nload_model 0x%lx\n", (unsigned long)serve,
            (unsigned long)parse, (unsigned long)reply, (unsigned long)load_model);
    fclose(f);
    for (int id = 0; id < n; id++) {
        serve(id);
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    return 0;
}
