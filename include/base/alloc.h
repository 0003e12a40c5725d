/* alloc.h: every heap allocation of planner goes through these wrappers.
 *
 * They behave like malloc/calloc/realloc/strdup/free and exist for one reason:
 * the allocation-failure tests ("torture" mode, as in curl) make the Nth
 * allocation fail, in turn, and check that each run ends with a clean error.
 * jansson is routed through them too (json_set_alloc_funcs in alloc_init).
 * libyaml allocates on its own and cannot be hooked.
 */
#ifndef PLANNER_ALLOC_H
#define PLANNER_ALLOC_H

#include <stddef.h>

void *pl_malloc(size_t size);
void *pl_calloc(size_t n, size_t size);   /* checks n * size for overflow */
void *pl_realloc(void *p, size_t size);
char *pl_strdup(const char *s);
void pl_free(void *p);                    /* NULL-safe */

/* A growable array: room for `need` elements of `size` bytes in `items`
 * (pl_malloc'd, or NULL), whose capacity is *cap elements.  When *cap is
 * short, the capacity doubles (from `first` when it is 0) until it holds
 * `need`, so n appends cost O(log n) reallocations.  Returns the array
 * (moved or not) with *cap updated, or NULL when out of memory or the size
 * overflows; then `items` and *cap are unchanged and still the caller's. */
void *pl_grow(void *items, size_t *cap, size_t need, size_t size, size_t first);

/* Routes jansson's allocations through pl_malloc/pl_free.  Call once at start. */
void alloc_init(void);

/* Bracket every jansson parse (src/jsonin.c): between the two, once one of
 * jansson's allocations has failed, every later one fails too, because
 * jansson 2.14 survives a failed token-buffer growth with a damaged token. */
void alloc_json_parse_begin(void);
void alloc_json_parse_end(void);

/* Fault injection (tests only): the `nth` allocation from now (1-based) and
 * only that one returns NULL; 0 disables.  alloc_count() is the number of
 * allocations made since the last alloc_fail_at() call. */
void alloc_fail_at(long nth);
long alloc_count(void);
int alloc_failed(void);   /* 1 once the injected failure has happened */

#endif
