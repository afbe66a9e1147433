/* The probes of the "infer" provider (workload.c). */
#define TRACEPOINT_CREATE_PROBES
#define TRACEPOINT_DEFINE
#include "infer_tp.h"
