/* A workload with a known profile: a CPU-bound function, a memcpy loop and a syscall-heavy loop,
 * each run for a fixed wall time, one after the other.  Recorded by ../record.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long spin_math(unsigned long n) {
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}

__attribute__((noinline)) static void cpu_phase(double secs) {
    double end = now() + secs;
    while (now() < end)
        sink += spin_math(2000000);
}

__attribute__((noinline)) static void copy_phase(double secs) {
    size_t n = 8 << 20;
    char *a = malloc(n), *b = malloc(n);
    memset(a, 1, n);
    double end = now() + secs;
    while (now() < end) {
        memcpy(b, a, n);
        sink += b[n / 2];
    }
    free(a);
    free(b);
}

__attribute__((noinline)) static void syscall_phase(double secs) {
    int fd = open("/dev/null", O_WRONLY);
    char c = 'x';
    double end = now() + secs;
    while (now() < end)
        for (int i = 0; i < 1000; i++)
            sink += write(fd, &c, 1);
    close(fd);
}

int main(int argc, char **argv) {
    double unit = argc > 1 ? atof(argv[1]) : 0.5;
    cpu_phase(unit * 2);
    copy_phase(unit);
    syscall_phase(unit);
    return 0;
}
