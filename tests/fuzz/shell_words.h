/* shell_words.h: a small POSIX/bash lexer for checking emitted scripts.
 *
 * It splits a script into words, operators and newlines the way bash(1)
 * does before expansion ("QUOTING", "Command Substitution"), and decodes each
 * word's quoting: every byte of a word keeps the context it came from, so a
 * test can tell text the shell takes literally from text it expands or runs.
 * Comment text is split into words too (an #SBATCH line is read by sbatch).
 * Here-documents, aliases and arithmetic are not interpreted: the emitters do
 * not write them, and a construct the lexer reads wrongly is read wrongly the
 * same way in the two scripts a test compares.
 *
 * The emitter fuzz harness (harness.c, harness_emit) lexes a script written
 * with placeholder names and the same script with hostile names, and checks
 * the shell-word property: the two have the same words and operators, and
 * the hostile names appear only as literal text. */
#ifndef PLANNER_SHELL_WORDS_H
#define PLANNER_SHELL_WORDS_H

#include <stddef.h>

/* How the shell treats a byte of a word. */
typedef enum sw_context {
    SW_LITERAL,    /* inside '...' or $'...', or backslash-escaped: taken as is */
    SW_BARE,       /* unquoted: subject to expansion, globbing, splitting */
    SW_DQUOTED,    /* inside "...": $ and ` still expand */
    SW_CODE        /* inside $(...), ${...}, `...`: run or expanded */
} sw_context;

typedef enum sw_kind {
    SW_WORD,       /* a word of a command */
    SW_COMMENT,    /* a word of a comment (after an unquoted # at a word start) */
    SW_OPERATOR,   /* ; & | ( ) < > and their combinations */
    SW_NEWLINE
} sw_kind;

typedef struct sw_token {
    sw_kind kind;
    size_t start, len;   /* its bytes: script.text[start .. start+len) */
} sw_token;

typedef struct sw_script {
    unsigned char *text;   /* decoded bytes of all tokens, in order */
    unsigned char *ctx;    /* sw_context of each byte of text */
    size_t n_bytes, cap_bytes;
    sw_token *tok;
    size_t n_tok, cap_tok;
} sw_script;

/* Lexes `len` bytes of `src` into *out (which should start zeroed).
 * Returns 0, or -1 with a reason in why (an unterminated quote or
 * substitution, or out of memory). */
int sw_lex(const char *src, size_t len, sw_script *out, char *why, size_t why_size);

void sw_free(sw_script *s);   /* NULL-safe, frees contents */

/* The shell-word property: `hostile` is `safe` with each placeholder
 * ph[k] replaced by name[k] (k < n) and nothing else changed: the same
 * tokens with the same bytes and contexts, and every byte of a name literal
 * (SW_LITERAL, or SW_BARE/SW_DQUOTED when it is a character no expansion
 * touches).  Returns 0, or -1 with the first difference in why. */
int sw_same_but_names(const sw_script *safe, const sw_script *hostile, const char *const *ph,
                      const char *const *name, int n, char *why, size_t why_size);

#endif
