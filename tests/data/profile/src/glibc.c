/* Workloads whose hot code is glibc's or the vDSO's, for tests that record them now (not by ../record.sh):
 *   glibc spin SECS   two threads on one pthread_spin_lock (the waiter spins on CPU), then on one mutex;
 *   glibc clock SECS  clock_gettime in a loop (the vDSO: user-mode code, no kernel entry). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_spinlock_t spin;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long counter;
static double end_time;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *worker(void *arg) {
    double half = *(double *)arg;
    while (now() < end_time - half)
        for (int i = 0; i < 1000; i++) {
            pthread_spin_lock(&spin);
            for (int k = 0; k < 50; k++)
                counter++;
            pthread_spin_unlock(&spin);
        }
    while (now() < end_time)
        for (int i = 0; i < 1000; i++) {
            pthread_mutex_lock(&mutex);
            for (int k = 0; k < 50; k++)
                counter++;
            pthread_mutex_unlock(&mutex);
        }
    return NULL;
}

int main(int argc, char **argv) {
    double secs = argc > 2 ? atof(argv[2]) : 1.0;
    end_time = now() + secs;
    if (argc > 1 && strcmp(argv[1], "clock") == 0) {
        long sum = 0;
        while (now() < end_time)
            sum++;
        return sum == 42;
    }
    double half = secs / 5; /* most of the time on the spinlock */
    pthread_t t[2];
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, &half);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    return 0;
}
