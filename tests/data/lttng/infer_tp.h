/* Provider "infer": request_begin / request_end around each request (LTTng-UST 2.x tracepoint provider). */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER infer

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "infer_tp.h"

#if !defined(INFER_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define INFER_TP_H

#include <lttng/tracepoint.h>

TRACEPOINT_EVENT(infer, request_begin, TP_ARGS(int, id), TP_FIELDS(ctf_integer(int, id, id)))
TRACEPOINT_EVENT(infer, request_end, TP_ARGS(int, id), TP_FIELDS(ctf_integer(int, id, id)))

#endif

#include <lttng/tracepoint-event.h>
