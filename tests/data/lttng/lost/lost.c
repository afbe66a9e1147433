/* Requests that lose events: one thread, 24 requests framed by infer:request_begin/_end (their id field), never
 * nested.  id % 3 == 0: 2 ms, no other event; id % 3 == 1: a burst of lttng_ust_tracef lines, then its end at once
 * (the tiny ring buffer is full: the end is likely discarded); id % 3 == 2: the same burst, 30 ms of sleep, then its
 * end (recorded, the buffer drained meanwhile; the events it discarded lie inside the span). */
#define _GNU_SOURCE
#include <lttng/tracef.h>
#include <time.h>
#include "../infer_tp.h"

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

int main(void) {
    for (int id = 0; id < 24; id++) {
        tracepoint(infer, request_begin, id);
        if (id % 3 == 0) {
            sleep_ms(2);
        } else {
            for (int i = 0; i < 20000; i++)
                lttng_ust_tracef("burst %d", i);
            if (id % 3 == 2)
                sleep_ms(30);
        }
        tracepoint(infer, request_end, id);
        sleep_ms(10);
    }
    return 0;
}
