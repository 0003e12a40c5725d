/* alloc.c: allocation wrappers with fault injection (see alloc.h).
 *
 * The variables below are the project's only mutable globals.  Three exist
 * for the allocation-failure tests (alloc_fail_at(n) makes exactly the n-th
 * allocation after the call fail): C11 atomics, since the search's worker
 * threads (base/workers.h) allocate too -- with several threads which
 * allocation is the n-th depends on the scheduling, so a test that needs
 * the same allocation to fail every time runs on one (-j 1), and one on
 * several asks only that each run fail cleanly or succeed whole
 * (test_alloc_fail search_survives_every_failure).  Two make a failed
 * allocation inside a jansson parse stick until the parse ends
 * (json_alloc): thread-local, each thread's parse its own.  In normal runs
 * fail_at is 0 and the wrappers cost one atomic add and one branch. */
#include <jansson.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"

static atomic_long g_fail_at;           /* 0: never fail */
static atomic_long g_count;             /* allocations since alloc_fail_at() */
static atomic_int g_failed;
static _Thread_local int g_json_parsing; /* inside alloc_json_parse_begin/end */
static _Thread_local int g_json_failed;  /* a jansson allocation of the current parse failed */

static int should_fail(void)
{
    long n = atomic_fetch_add_explicit(&g_count, 1, memory_order_relaxed) + 1;
    long at = atomic_load_explicit(&g_fail_at, memory_order_relaxed);
    if (at > 0 && n == at) {
        atomic_store(&g_failed, 1);
        return 1;
    }
    return 0;
}

void *pl_malloc(size_t size)
{
    if (should_fail())
        return NULL;
    return malloc(size == 0 ? 1 : size);
}

void *pl_calloc(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    if (should_fail())
        return NULL;
    return calloc(n == 0 ? 1 : n, size == 0 ? 1 : size);
}

void *pl_realloc(void *p, size_t size)
{
    if (should_fail())
        return NULL;
    return realloc(p, size == 0 ? 1 : size);
}

char *pl_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = pl_malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

void pl_free(void *p)
{
    free(p);
}

void *pl_grow(void *items, size_t *cap, size_t need, size_t size, size_t first)
{
    size_t ncap = *cap > 0 ? *cap : first > 0 ? first : 1;
    void *p;
    if (need <= *cap)
        return items;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return NULL;
        ncap *= 2;
    }
    if (size > 0 && ncap > SIZE_MAX / size)
        return NULL;
    p = pl_realloc(items, ncap * size);
    if (p != NULL)
        *cap = ncap;
    return p;
}

/* jansson's allocator.  jansson 2.14 ignores a failed growth of its token
 * buffer and drops a byte, which can be a string's closing quote; its decoder
 * then runs past the buffer.  Once one allocation of a parse has failed, every
 * later one of that parse fails too, so jansson gives up at its next
 * allocation instead of decoding a damaged token (see src/jsonin.c). */
static void *json_alloc(size_t size)
{
    void *p;
    if (g_json_failed)
        return NULL;
    p = pl_malloc(size);
    if (p == NULL && g_json_parsing)
        g_json_failed = 1;
    return p;
}

void alloc_json_parse_begin(void)
{
    g_json_parsing = 1;
    g_json_failed = 0;
}

void alloc_json_parse_end(void)
{
    g_json_parsing = 0;
    g_json_failed = 0;
}

void alloc_init(void)
{
    json_set_alloc_funcs(json_alloc, pl_free);
}

void alloc_fail_at(long nth)
{
    atomic_store(&g_fail_at, 0);   /* no allocation fails while the count restarts */
    atomic_store(&g_count, 0);
    atomic_store(&g_failed, 0);
    atomic_store(&g_fail_at, nth);
}

long alloc_count(void)
{
    return atomic_load(&g_count);
}

int alloc_failed(void)
{
    return atomic_load(&g_failed);
}
