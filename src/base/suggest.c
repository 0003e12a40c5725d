/* suggest.c: did-you-mean for unknown keys and names.
 *
 * Edit distance (with transpositions) on a three-row table on the stack; words longer than
 * SUGGEST_MAX_LEN are never matched (no allocation, bounded work).  A
 * candidate qualifies at distance <= 2 and <= max(1, longer length / 3), so
 * "hiden" -> "hidden" but "foo" suggests nothing. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "base/suggest.h"

#define SUGGEST_MAX_LEN 64

/* Optimal-string-alignment distance: insertions, deletions, substitutions
 * and transpositions of neighbours ("nodse" -> "nodes" is 1). */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), i, j;
    size_t rows[3][SUGGEST_MAX_LEN + 1];
    size_t *pp = rows[0], *prev = rows[1], *cur = rows[2], *tmp;

    if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN)
        return (size_t)-1;
    for (j = 0; j <= lb; j++)
        prev[j] = j;
    for (i = 1; i <= la; i++) {
        int ai = tolower((unsigned char)a[i - 1]);
        cur[0] = i;
        for (j = 1; j <= lb; j++) {
            int bj = tolower((unsigned char)b[j - 1]);
            size_t best = prev[j - 1] + (ai == bj ? 0 : 1);
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && ai == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == bj && pp[j - 2] + 1 < best)
                best = pp[j - 2] + 1;
            cur[j] = best;
        }
        tmp = pp;
        pp = prev;
        prev = cur;
        cur = tmp;
    }
    return prev[lb];
}

const char *suggest_closest(const char *word, const char *const *candidates, size_t n)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1, i;
    if (word == NULL)
        return NULL;
    for (i = 0; i < n; i++) {
        size_t d = edit_distance(word, candidates[i]);
        size_t longer = strlen(word) > strlen(candidates[i]) ? strlen(word)
                                                             : strlen(candidates[i]);
        size_t limit = longer / 3 < 1 ? 1 : longer / 3;
        if (limit > 2)
            limit = 2;
        if (d <= limit && d < best_d) {
            best = candidates[i];
            best_d = d;
        }
    }
    return best;
}

void suggest_format(const char *word, const char *const *candidates, size_t n, char *buf,
                    size_t size)
{
    const char *s = suggest_closest(word, candidates, n);
    if (size == 0)
        return;
    if (s == NULL)
        buf[0] = '\0';
    else
        snprintf(buf, size, " (did you mean '%s'?)", s);
}
