/* A tiny "JIT": copies a counting loop into executable memory, names it in /tmp/perf-PID.map (the
 * perf JIT map format) with a name that needs escaping, and runs it.  Recorded by ../record.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* mov ecx, 0x10000000; again: dec ecx; jnz again; ret */
static const unsigned char code[] = {0xb9, 0x00, 0x00, 0x00, 0x10, 0xff, 0xc9, 0x75, 0xfc, 0xc3};

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 4;
    unsigned char *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return 1;
    memcpy(mem, code, sizeof code);
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
    FILE *map = fopen(path, "w");
    if (!map)
        return 1;
    fprintf(map, "%lx %zx jit::loop<int&, \"q\">\n", (unsigned long)mem, sizeof code);
    fclose(map);
    void (*fn)(void) = (void (*)(void))mem;
    for (int i = 0; i < rounds; i++)
        fn();
    return 0;
}
