/* shell_words.c: the lexer of shell_words.h.  Quoting follows bash(1),
 * "QUOTING" (backslash, single quotes, double quotes, ANSI-C $'...') and
 * "Command Substitution" ($(...), `...`); ${...} is scanned like $(...). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "shell_words.h"

/* The checker is not what is fuzzed: no coverage feedback from it (it would
 * cost most of each execution and steer the fuzzer towards lexer paths). */
#if defined(__clang__)
#pragma clang attribute push(__attribute__((no_sanitize("coverage"))), apply_to = function)
#endif

typedef struct lexer {
    const char *s;
    size_t n, i;
    sw_script *out;
    char *why;
    size_t why_size;
} lexer;

static int lex_fail(lexer *L, const char *what)
{
    snprintf(L->why, L->why_size, "%s at byte %zu", what, L->i);
    return -1;
}

static int push(lexer *L, unsigned char c, sw_context ctx)
{
    sw_script *o = L->out;
    if (o->n_bytes == o->cap_bytes) {
        size_t cap = o->cap_bytes ? 2 * o->cap_bytes : 256;
        unsigned char *t = pl_realloc(o->text, cap), *x;
        if (t == NULL)
            return lex_fail(L, "out of memory");
        o->text = t;
        x = pl_realloc(o->ctx, cap);
        if (x == NULL)
            return lex_fail(L, "out of memory");
        o->ctx = x;
        o->cap_bytes = cap;
    }
    o->text[o->n_bytes] = c;
    o->ctx[o->n_bytes++] = (unsigned char)ctx;
    return 0;
}

static int begin(lexer *L, sw_kind kind)
{
    sw_script *o = L->out;
    if (o->n_tok == o->cap_tok) {
        size_t cap = o->cap_tok ? 2 * o->cap_tok : 64;
        sw_token *t = pl_realloc(o->tok, cap * sizeof *t);
        if (t == NULL)
            return lex_fail(L, "out of memory");
        o->tok = t;
        o->cap_tok = cap;
    }
    o->tok[o->n_tok++] = (sw_token){kind, o->n_bytes, 0};
    return 0;
}

static void end(lexer *L)
{
    sw_token *t = &L->out->tok[L->out->n_tok - 1];
    t->len = L->out->n_bytes - t->start;
}

static bool is_operator(char c)
{
    return c != '\0' && strchr(";&|<>()", c) != NULL;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int scan_code(lexer *L, char open, char close);

/* At a "$(" or "${"? */
static bool at_substitution(const lexer *L)
{
    return L->s[L->i] == '$' && L->i + 1 < L->n &&
           (L->s[L->i + 1] == '(' || L->s[L->i + 1] == '{');
}

/* The substitution at_substitution() found, as code. */
static int scan_substitution(lexer *L)
{
    char open = L->s[L->i + 1];
    return scan_code(L, open, open == '(' ? ')' : '}');
}

/* One step inside code: a backslash and the byte after it (when
 * `escapes`), a nested substitution (when `nested`), or one plain byte,
 * consumed as code.  *plain is that plain byte, '\0' after the others.
 * Returns 0, or -1 on error. */
static int code_step(lexer *L, bool escapes, bool nested, char *plain)
{
    char c = L->s[L->i];
    *plain = '\0';
    if (escapes && c == '\\' && L->i + 1 < L->n) {
        if (push(L, '\\', SW_CODE) || push(L, (unsigned char)L->s[L->i + 1], SW_CODE))
            return -1;
        L->i += 2;
        return 0;
    }
    if (nested && at_substitution(L))
        return scan_substitution(L);
    L->i++;
    *plain = c;
    return push(L, (unsigned char)c, SW_CODE);
}

/* Raw text up to and including the closing quote q (' or " or `), as code:
 * inside a substitution quoting only matters for finding its end. */
static int scan_quoted_code(lexer *L, char q)
{
    if (push(L, (unsigned char)L->s[L->i++], SW_CODE))
        return -1;
    while (L->i < L->n) {
        char b;
        if (code_step(L, q != '\'', q == '"', &b))
            return -1;
        if (b == q)
            return 0;
    }
    return lex_fail(L, "unterminated quote in a substitution");
}

/* $( ... ) or ${ ... } from the '$', nested ones included, as code. */
static int scan_code(lexer *L, char open, char close)
{
    int depth = 1;
    if (push(L, '$', SW_CODE) || push(L, (unsigned char)open, SW_CODE))
        return -1;
    L->i += 2;
    while (L->i < L->n) {
        char c = L->s[L->i], b;
        if (c == '\'' || c == '"' || c == '`') {
            if (scan_quoted_code(L, c))
                return -1;
            continue;
        }
        if (code_step(L, true, true, &b))
            return -1;
        if (b == open)
            depth++;
        else if (b == close && --depth == 0)
            return 0;
    }
    return lex_fail(L, "unterminated substitution");
}

/* '...': literal up to the next quote (a comment's quote ends at its line). */
static int scan_single(lexer *L, bool comment)
{
    L->i++;
    while (L->i < L->n && L->s[L->i] != '\'') {
        if (comment && L->s[L->i] == '\n')
            return 0;
        if (push(L, (unsigned char)L->s[L->i++], SW_LITERAL))
            return -1;
    }
    if (L->i >= L->n)
        return comment ? 0 : lex_fail(L, "unterminated single quote");
    L->i++;
    return 0;
}

/* One escape of $'...' after its backslash; the decoded byte into *c. */
static void ansi_escape(lexer *L, unsigned char *c)
{
    static const char from[] = "abefnrtv\\'\"?E", to[] = "\a\b\033\f\n\r\t\v\\'\"?\033";
    char e = L->s[L->i];
    const char *p = strchr(from, e);
    if (e == 'x' && L->i + 1 < L->n && hex_value(L->s[L->i + 1]) >= 0) {
        int v = 0;
        L->i++;
        for (int k = 0; k < 2 && L->i < L->n && hex_value(L->s[L->i]) >= 0; k++)
            v = 16 * v + hex_value(L->s[L->i++]);
        *c = (unsigned char)v;
        return;
    }
    if (e >= '0' && e <= '7') {
        int v = 0;
        for (int k = 0; k < 3 && L->i < L->n && L->s[L->i] >= '0' && L->s[L->i] <= '7'; k++)
            v = 8 * v + (L->s[L->i++] - '0');
        *c = (unsigned char)v;
        return;
    }
    L->i++;
    *c = p != NULL && e != '\0' ? (unsigned char)to[p - from] : (unsigned char)e;
}

/* $'...' from the '$'. */
static int scan_ansi(lexer *L)
{
    L->i += 2;
    while (L->i < L->n && L->s[L->i] != '\'') {
        unsigned char c = (unsigned char)L->s[L->i];
        if (c == '\\' && L->i + 1 < L->n) {
            L->i++;
            ansi_escape(L, &c);
        } else {
            L->i++;
        }
        if (push(L, c, SW_LITERAL))
            return -1;
    }
    if (L->i >= L->n)
        return lex_fail(L, "unterminated $'");
    L->i++;
    return 0;
}

/* "...": $ and ` expand, a backslash escapes only $ ` " \ and newline. */
static int scan_double(lexer *L, bool comment)
{
    L->i++;
    while (L->i < L->n && L->s[L->i] != '"') {
        char c = L->s[L->i], d = L->i + 1 < L->n ? L->s[L->i + 1] : '\0';
        if (comment && c == '\n')
            return 0;
        if (c == '\\' && d != '\0' && strchr("$`\"\\\n", d) != NULL) {
            L->i += 2;
            if (d != '\n' && push(L, (unsigned char)d, SW_LITERAL))
                return -1;
        } else if (!comment && at_substitution(L)) {
            if (scan_substitution(L))
                return -1;
        } else if (!comment && c == '`') {
            if (scan_quoted_code(L, '`'))
                return -1;
        } else {
            if (push(L, (unsigned char)c, SW_DQUOTED))
                return -1;
            L->i++;
        }
    }
    if (L->i >= L->n)
        return comment ? 0 : lex_fail(L, "unterminated double quote");
    L->i++;
    return 0;
}

/* One word (of a command, or of a comment when `comment`). */
static int scan_word(lexer *L, bool comment)
{
    if (begin(L, comment ? SW_COMMENT : SW_WORD))
        return -1;
    while (L->i < L->n) {
        char c = L->s[L->i], d = L->i + 1 < L->n ? L->s[L->i + 1] : '\0';
        int rc = 0;
        if (c == ' ' || c == '\t' || c == '\n' || (!comment && is_operator(c)))
            break;
        if (c == '\\' && d != '\0' && !(comment && d == '\n')) {
            L->i += 2;   /* a backslash-newline joins lines */
            rc = d == '\n' ? 0 : push(L, (unsigned char)d, SW_LITERAL);
        } else if (c == '\'') {
            rc = scan_single(L, comment);
        } else if (c == '$' && d == '\'') {
            rc = scan_ansi(L);
        } else if (c == '"' || (c == '$' && d == '"')) {
            L->i += c == '$';
            rc = scan_double(L, comment);
        } else if (!comment && at_substitution(L)) {
            rc = scan_substitution(L);
        } else if (!comment && c == '`') {
            rc = scan_quoted_code(L, '`');
        } else {
            rc = push(L, (unsigned char)c, SW_BARE);
            L->i++;
        }
        if (rc)
            return -1;
    }
    end(L);
    return 0;
}

int sw_lex(const char *src, size_t len, sw_script *out, char *why, size_t why_size)
{
    lexer L = {src, len, 0, out, why, why_size};
    bool comment = false;
    while (L.i < L.n) {
        char c = L.s[L.i];
        if (c == '\n') {
            if (begin(&L, SW_NEWLINE) || push(&L, '\n', SW_BARE))
                return -1;
            end(&L);
            L.i++;
            comment = false;
        } else if (c == ' ' || c == '\t' || (c == '\\' && L.i + 1 < L.n && L.s[L.i + 1] == '\n' &&
                                              !comment)) {
            L.i += c == '\\' ? 2 : 1;
        } else if (c == '#' && !comment) {
            comment = true;
            L.i++;
        } else if (is_operator(c) && !comment) {
            if (begin(&L, SW_OPERATOR))
                return -1;
            do {
                if (push(&L, (unsigned char)L.s[L.i++], SW_BARE))
                    return -1;
            } while (L.i < L.n && L.s[L.i] != '\0' && strchr(";&|<>", L.s[L.i]) != NULL &&
                     strchr(";&|<>", c) != NULL);
            end(&L);
        } else if (scan_word(&L, comment)) {
            return -1;
        }
    }
    return 0;
}

void sw_free(sw_script *s)
{
    if (s == NULL)
        return;
    pl_free(s->text);
    pl_free(s->ctx);
    pl_free(s->tok);
    memset(s, 0, sizeof *s);
}

/* A character no expansion, splitting or globbing touches where it stands
 * unquoted (what emit's plain words are made of). */
static bool inert_bare(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && strchr("_.,:/+=-", c) != NULL);
}

/* The placeholder starting at safe word byte p, or -1.  (A plain loop: the
 * fuzzer's memcmp hook would cost more than the rest of the check.) */
static int placeholder_at(const sw_script *s, size_t p, size_t end, const char *const *ph, int n)
{
    for (int k = 0; k < n; k++) {
        size_t l = 0;
        while (ph[k][l] != '\0' && p + l < end && s->text[p + l] == (unsigned char)ph[k][l])
            l++;
        if (ph[k][l] == '\0')
            return k;
    }
    return -1;
}

/* One token: safe's bytes with the placeholders replaced equal hostile's. */
static int same_token(const sw_script *safe, const sw_token *a, const sw_script *hostile,
                      const sw_token *b, const char *const *ph, const char *const *name, int n,
                      char *why, size_t why_size)
{
    size_t p = a->start, q = b->start, pe = a->start + a->len, qe = b->start + b->len;
    while (p < pe) {
        int k = a->kind == SW_OPERATOR || a->kind == SW_NEWLINE
                    ? -1 : placeholder_at(safe, p, pe, ph, n);
        if (k < 0) {
            if (q >= qe || hostile->text[q] != safe->text[p] || hostile->ctx[q] != safe->ctx[p])
                goto differ;
            p++, q++;
            continue;
        }
        for (const unsigned char *c = (const unsigned char *)name[k]; *c; c++, q++) {
            sw_context x;
            if (q >= qe || hostile->text[q] != *c)
                goto differ;
            x = (sw_context)hostile->ctx[q];
            if (!(x == SW_LITERAL || ((x == SW_BARE || x == SW_DQUOTED) && inert_bare(*c)))) {
                snprintf(why, why_size, "name %d's byte 0x%02x reaches the shell %s", k, *c,
                         x == SW_CODE ? "inside a substitution" : "unquoted");
                return -1;
            }
        }
        p += strlen(ph[k]);
    }
    if (q == qe)
        return 0;
differ:
    snprintf(why, why_size, "token differs: '%.*s' vs '%.*s'", (int)(a->len > 60 ? 60 : a->len),
             (const char *)safe->text + a->start, (int)(b->len > 60 ? 60 : b->len),
             (const char *)hostile->text + b->start);
    return -1;
}

int sw_same_but_names(const sw_script *safe, const sw_script *hostile, const char *const *ph,
                      const char *const *name, int n, char *why, size_t why_size)
{
    size_t t;
    for (t = 0; t < safe->n_tok && t < hostile->n_tok; t++) {
        const sw_token *a = &safe->tok[t], *b = &hostile->tok[t];
        if (a->kind != b->kind) {
            snprintf(why, why_size, "token %zu: kind %d vs %d", t, (int)a->kind, (int)b->kind);
            return -1;
        }
        if (same_token(safe, a, hostile, b, ph, name, n, why, why_size))
            return -1;
    }
    if (safe->n_tok != hostile->n_tok) {
        snprintf(why, why_size, "%zu tokens vs %zu", safe->n_tok, hostile->n_tok);
        return -1;
    }
    return 0;
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
