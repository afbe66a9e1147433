/*
 * The request workload recorded into tests/data/lttng (see record.sh).
 *
 * All threads are pinned to CPU 0.  "req" serves N requests: each is fixed CPU work (2 ms of its own CPU
 * time), framed by lttng_ust_tracef("infer start %d") / ("infer end %d"), by the provider events
 * infer:request_begin / infer:request_end (with the id as a field), and by ftrace trace_marker writes.
 * Every tenth request (id % 10 == 5) also waits for "writer", which writes 1 MB and fsyncs it before it
 * answers through a pipe: that request is blocked, and its waker is the writer.  "rt" is SCHED_FIFO 50 and
 * spins 1 ms every 5 ms, so it preempts requests.  The thread ids are printed (the expected figures use them).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <lttng/tracef.h>
#include "infer_tp.h" /* its probes are in infer_tp.c */

static int n_requests = 60;
static volatile int stop;
static int to_writer[2], from_writer[2];
static int marker = -1;
static const char *scratch;

static void pin(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    sched_setaffinity(0, sizeof(set), &set);
}

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void spin_cpu(double seconds) {
    double end = cpu_now() + seconds;
    while (cpu_now() < end)
        ;
}

static void mark(const char *what, int id) {
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "infer %s %d", what, id);
    if (marker >= 0 && write(marker, buf, n) < 0)
        perror("trace_marker");
}

static void *rt_main(void *arg) {
    (void)arg;
    pin();
    struct sched_param p = {.sched_priority = 50};
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &p))
        fprintf(stderr, "rt: SCHED_FIFO refused\n");
    printf("rt %ld\n", (long)syscall(SYS_gettid));
    fflush(stdout);
    struct timespec period = {0, 5000000};
    while (!stop) {
        nanosleep(&period, NULL);
        spin_cpu(0.001);
    }
    return NULL;
}

static void *writer_main(void *arg) {
    (void)arg;
    pin();
    printf("writer %ld\n", (long)syscall(SYS_gettid));
    fflush(stdout);
    static char block[1 << 20];
    memset(block, 'x', sizeof(block));
    char cmd;
    while (read(to_writer[0], &cmd, 1) == 1 && cmd == 'w') {
        int fd = open(scratch, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || write(fd, block, sizeof(block)) < 0 || fsync(fd) < 0)
            perror("writer");
        close(fd);
        if (write(from_writer[1], "d", 1) != 1)
            perror("writer reply");
    }
    return NULL;
}

static void *req_main(void *arg) {
    (void)arg;
    pin();
    printf("req %ld\n", (long)syscall(SYS_gettid));
    fflush(stdout);
    struct timespec gap = {0, 3000000};
    for (int id = 0; id < n_requests; id++) {
        lttng_ust_tracef("infer start %d", id);
        tracepoint(infer, request_begin, id);
        mark("start", id);
        spin_cpu(0.002);
        if (id % 10 == 5) {
            char c;
            if (write(to_writer[1], "w", 1) != 1 || read(from_writer[0], &c, 1) != 1)
                perror("req");
        }
        mark("end", id);
        tracepoint(infer, request_end, id);
        lttng_ust_tracef("infer end %d", id);
        nanosleep(&gap, NULL);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: workload SCRATCH_FILE [TRACE_MARKER] [N]\n");
        return 2;
    }
    scratch = argv[1];
    if (argc > 2)
        marker = open(argv[2], O_WRONLY);
    if (argc > 3)
        n_requests = atoi(argv[3]);
    if (pipe(to_writer) || pipe(from_writer))
        return 1;
    pthread_t rt, writer, req;
    pthread_create(&rt, NULL, rt_main, NULL);
    pthread_create(&writer, NULL, writer_main, NULL);
    usleep(20000);
    pthread_create(&req, NULL, req_main, NULL);
    pthread_join(req, NULL);
    stop = 1;
    if (write(to_writer[1], "q", 1) != 1)
        perror("quit");
    pthread_join(rt, NULL);
    pthread_join(writer, NULL);
    unlink(scratch);
    return 0;
}
