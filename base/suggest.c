/* suggest.c - did-you-mean for mistyped options, keys and commands
 * (base/hg_base.h): optimal string alignment distance, which counts a
 * swap of two neighbouring letters as one edit. */
#include "base/hg_base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Edit distance of a[0..n) and b[0..m), or (size_t)-1 without memory. */
static size_t osa(const char *a, size_t n, const char *b, size_t m)
{
    size_t *d = malloc((n + 1) * (m + 1) * sizeof(size_t)); /* [n+1][m+1] */
    if (!d)
        return (size_t)-1;
#define D(i, j) d[(i) * (m + 1) + (j)]
    for (size_t i = 0; i <= n; i++)
        D(i, 0) = i;
    for (size_t j = 0; j <= m; j++)
        D(0, j) = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t c = D(i - 1, j - 1) + (a[i - 1] != b[j - 1]);
            if (D(i - 1, j) + 1 < c)
                c = D(i - 1, j) + 1;
            if (D(i, j - 1) + 1 < c)
                c = D(i, j - 1) + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                D(i - 2, j - 2) + 1 < c)
                c = D(i - 2, j - 2) + 1;
            D(i, j) = c;
        }
    size_t r = D(n, m);
#undef D
    free(d);
    return r;
}

void hg_suggest_init(struct hg_suggest *s, const char *word)
{
    s->word = word;
    s->best = NULL;
    s->dist = (size_t)-1;
}

void hg_suggest_add(struct hg_suggest *s, const char *cand)
{
    if (!cand || !s->word)
        return;
    size_t d = osa(s->word, strlen(s->word), cand, strlen(cand));
    if (d < s->dist) {
        s->dist = d;
        s->best = cand;
    }
}

const char *hg_suggest_best(const struct hg_suggest *s)
{
    size_t n = s->word ? strlen(s->word) : 0, lim = n / 3 > 1 ? n / 3 : 1;
    return s->best && s->dist > 0 && s->dist <= lim ? s->best : NULL;
}

const char *hg_suggest_text(const char *word, const char *const *names, const char *prefix,
                            char *out, size_t len)
{
    struct hg_suggest s;
    hg_suggest_init(&s, word);
    for (size_t i = 0; names[i]; i++)
        hg_suggest_add(&s, names[i]);
    const char *b = hg_suggest_best(&s);
    if (len)
        out[0] = 0;
    if (b)
        snprintf(out, len, " (did you mean %s%s?)", prefix, b);
    return out;
}

void hg_print_version(const char *program)
{
    if (strcmp(program, PACKAGE_NAME) == 0)
        printf("%s %s\n", program, PACKAGE_VERSION);
    else
        printf("%s (%s) %s\n", program, PACKAGE_NAME, PACKAGE_VERSION);
}
