/*
 * The request loop of the recorded LTTng kernel + user-space session (lttng_fixtures/build.sh).
 *
 * "req" (pinned to CPU 0) serves N requests, each framed by lttng_ust_tracef("req start %d") and
 * ("req end %d") and made of fixed CPU work (REQ_WORK of its own CPU time).  Some are slow for a known
 * reason, by id % 8:
 *   1  preempted by a CPU hog: "hog" (SCHED_OTHER, CPU 0) is woken and spins HOG_WORK of CPU time;
 *   3  preempted by an RT thread: "rt" (SCHED_FIFO 50, CPU 0) is woken and spins RT_WORK;
 *   5  blocked on I/O: poll() then read() of a pipe that "disk" (CPU 1, waiting in epoll_wait) answers
 *      after a DISK_WAIT sleep;
 *   7  blocked on a lock: "holder" (CPU 1) holds a mutex, spins HOLD_WORK, then releases it.
 * The others run alone.  Between requests "req" waits in select() (a 4 ms timeout).  poll, epoll_wait and
 * select are there on purpose: their syscall events carry sequences of structs of bit-fields and byte
 * sequences, the layouts a CTF reader must decode (issue 33).  Thread ids and roles are printed:
 * "tid <role> <tid>".
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <lttng/tracef.h>

#define N_REQUESTS 48
#define REQ_WORK 0.0005
#define HOG_WORK 0.003
#define RT_WORK 0.002
#define DISK_WAIT_NS 3000000L
#define HOLD_WORK 0.002

static sem_t hog_go, rt_go, hold_go, held;
static int to_disk[2], from_disk[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop;

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
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

static void say(const char *role) {
    pthread_setname_np(pthread_self(), role);
    printf("tid %s %ld\n", role, (long)syscall(SYS_gettid));
    fflush(stdout);
}

static void *hog_main(void *arg) {
    (void)arg;
    pin(0);
    say("hog");
    while (sem_wait(&hog_go) == 0 && !stop)
        spin_cpu(HOG_WORK);
    return NULL;
}

static void *rt_main(void *arg) {
    (void)arg;
    pin(0);
    struct sched_param p = {.sched_priority = 50};
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &p))
        perror("SCHED_FIFO");
    say("rt");
    while (sem_wait(&rt_go) == 0 && !stop)
        spin_cpu(RT_WORK);
    return NULL;
}

static void *disk_main(void *arg) {
    (void)arg;
    pin(1);
    say("disk");
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = to_disk[0]}, got;
    epoll_ctl(ep, EPOLL_CTL_ADD, to_disk[0], &ev);
    char c;
    while (epoll_wait(ep, &got, 1, -1) == 1 && read(to_disk[0], &c, 1) == 1 && !stop) {
        struct timespec ts = {0, DISK_WAIT_NS};
        nanosleep(&ts, NULL);
        if (write(from_disk[1], &c, 1) != 1)
            break;
    }
    return NULL;
}

static void *holder_main(void *arg) {
    (void)arg;
    pin(1);
    say("holder");
    while (sem_wait(&hold_go) == 0 && !stop) {
        pthread_mutex_lock(&lock);
        sem_post(&held);
        spin_cpu(HOLD_WORK);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(void) {
    pthread_t th[4];
    sem_init(&hog_go, 0, 0);
    sem_init(&rt_go, 0, 0);
    sem_init(&hold_go, 0, 0);
    sem_init(&held, 0, 0);
    if (pipe(to_disk) || pipe(from_disk))
        return 1;
    pin(0);
    say("req");
    pthread_create(&th[0], NULL, hog_main, NULL);
    pthread_create(&th[1], NULL, rt_main, NULL);
    pthread_create(&th[2], NULL, disk_main, NULL);
    pthread_create(&th[3], NULL, holder_main, NULL);
    struct timespec settle = {0, 50000000L};
    nanosleep(&settle, NULL);
    for (int id = 0; id < N_REQUESTS; id++) {
        int why = id % 8;
        if (why == 7) { /* the holder takes the lock before the request starts */
            sem_post(&hold_go);
            sem_wait(&held);
        }
        lttng_ust_tracef("req start %d", id);
        if (why == 1)
            sem_post(&hog_go);
        if (why == 3)
            sem_post(&rt_go);
        spin_cpu(REQ_WORK);
        if (why == 5) {
            char c = 'r';
            struct pollfd pfd = {.fd = from_disk[0], .events = POLLIN};
            if (write(to_disk[1], &c, 1) != 1 || poll(&pfd, 1, -1) != 1 || read(from_disk[0], &c, 1) != 1)
                perror("disk");
        }
        if (why == 7) {
            pthread_mutex_lock(&lock);
            pthread_mutex_unlock(&lock);
        }
        lttng_ust_tracef("req end %d", id);
        fd_set rd;
        FD_ZERO(&rd);
        FD_SET(from_disk[0], &rd);
        struct timeval tv = {0, 4000};
        select(from_disk[0] + 1, &rd, NULL, NULL, &tv);
    }
    stop = 1;
    printf("done %d requests\n", N_REQUESTS);
    return 0;
}
