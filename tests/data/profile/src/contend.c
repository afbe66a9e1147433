/* Threads contending on one mutex: each holds it briefly around a tiny critical section.
 * Recorded by ../record.sh. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long counter;
static double end_time;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void critical(void) {
    for (int i = 0; i < 200; i++)
        counter++;
}

static void *worker(void *arg) {
    (void)arg;
    while (now() < end_time)
        for (int i = 0; i < 1000; i++) {
            pthread_mutex_lock(&lock);
            critical();
            pthread_mutex_unlock(&lock);
        }
    return NULL;
}

int main(int argc, char **argv) {
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    pthread_t t[4];
    end_time = now() + secs;
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    return 0;
}
