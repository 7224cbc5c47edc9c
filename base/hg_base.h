/* hg_base.h - what every room shares and nothing numeric (the base room,
 * docs/architecture.md). Today: did-you-mean suggestions for the option
 * parsers of every program. */
#ifndef HG_BASE_H
#define HG_BASE_H

#include <stddef.h>

/* The closest of a set of names to a mistyped word: feed every candidate
 * to hg_suggest_add, then hg_suggest_best gives the nearest one by edit
 * distance (insert, delete, replace, swap of neighbours), or NULL when
 * none is within max(1, strlen(word) / 3) edits. Ties: the first fed. */
struct hg_suggest {
    const char *word;
    const char *best; /* NULL: none yet */
    size_t dist;      /* best's distance */
};

void hg_suggest_init(struct hg_suggest *s, const char *word);
void hg_suggest_add(struct hg_suggest *s, const char *cand);
const char *hg_suggest_best(const struct hg_suggest *s);

/* " (did you mean --NAME?)" for word among the NULL-terminated names
 * (prefix "--", "" for commands and keys), or "" when none is close;
 * into out[len], which is returned. */
const char *hg_suggest_text(const char *word, const char *const *names, const char *prefix,
                            char *out, size_t len);

/* The program's version line: "NAME (hgtrain) VERSION" on stdout. */
void hg_print_version(const char *program);

#endif
