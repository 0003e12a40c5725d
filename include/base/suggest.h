/* suggest.h: "did you mean" for unknown names in input files. */
#ifndef PLANNER_SUGGEST_H
#define PLANNER_SUGGEST_H

#include <stddef.h>

/* The candidate closest to `word` by edit distance (case-insensitive), or NULL
 * when none is close enough to be a plausible typo (distance <= 2, and at most
 * a third of the longer word for short words). */
const char *suggest_closest(const char *word, const char *const *candidates, size_t n);

/* Formats " (did you mean 'X'?)" into buf, or "" when there is no suggestion. */
void suggest_format(const char *word, const char *const *candidates, size_t n, char *buf,
                    size_t size);

#endif
