/* bleu.h - corpus BLEU and chrF as sacreBLEU 2.x computes them with its
 * defaults (one reference per segment):
 *
 *   BLEU: each line is right-stripped, then tokenized by the `13a`
 *   tokenizer (mteval-v13a), n-grams 1..4 clipped by the reference, summed
 *   over the corpus, brevity penalty from the summed lengths, smoothing
 *   `exp` (a zero n-gram precision becomes 100 / (2^k · total)), no
 *   lowercasing. hg_bleu_format prints sacreBLEU's line:
 *   "BLEU = 48.89 85.7/66.7/40.0/25.0 (BP = 1.000 ratio = 1.000 hyp_len = 7 ref_len = 7)".
 *
 *   chrF2: character n-grams 1..6 of each line with all whitespace removed,
 *   hypothesis/reference/match counts summed over the corpus per order;
 *   precision and recall are averaged over the orders where both sides
 *   have n-grams, then F-beta with beta = 2 (sacreBLEU's default, not the
 *   eps-smoothed chrF++.py variant).
 *
 * Whitespace is Python's str.split() set (ASCII \t\n\v\f\r, U+001C..U+001F,
 * space, U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F,
 * U+205F, U+3000); characters are Unicode code points of UTF-8 text.
 * The caller gives valid UTF-8 (the file functions check it). */
#ifndef HG_BLEU_H
#define HG_BLEU_H

#include <stddef.h>
#include <stdint.h>

#define HG_BLEU_ORDER 4
#define HG_CHRF_ORDER 6
#define HG_CHRF_BETA 2

/* sacreBLEU's 13a tokenization of s[0..n): a malloc'd NUL-terminated
 * string, tokens separated by single spaces, no leading or trailing space
 * (the caller frees it); NULL if out of memory. The line is right-stripped
 * first, as sacreBLEU's BLEU does. */
char *hg_tokenize_13a(const char *s, size_t n);

/* Sufficient statistics of corpus BLEU. */
struct hg_bleu_stats {
    int64_t hyp_len, ref_len;
    int64_t correct[HG_BLEU_ORDER], total[HG_BLEU_ORDER];
};

struct hg_bleu {
    double score;                      /* 0..100 */
    double precisions[HG_BLEU_ORDER];  /* percentages */
    double bp, ratio;
    int64_t hyp_len, ref_len;
};

/* Adds one segment (raw, untokenized lines; NUL-terminated). 0, or -1 if
 * out of memory. */
int hg_bleu_add(struct hg_bleu_stats *st, const char *hyp, const char *ref);
void hg_bleu_compute(const struct hg_bleu_stats *st, struct hg_bleu *out);
/* sacreBLEU's score line (see above) into buf; returns snprintf's value. */
int hg_bleu_format(const struct hg_bleu *b, char *buf, size_t len);

/* Sufficient statistics of corpus chrF. */
struct hg_chrf_stats {
    int64_t hyp[HG_CHRF_ORDER], ref[HG_CHRF_ORDER], match[HG_CHRF_ORDER];
};

int hg_chrf_add(struct hg_chrf_stats *st, const char *hyp, const char *ref);
/* The chrF2 score, 0..100. */
double hg_chrf_compute(const struct hg_chrf_stats *st);

/* Scores a hypothesis file against a reference file (path "-" = standard
 * input). Both are read whole and checked: strict UTF-8, no NUL bytes
 * ("FILE:LINE:COLUMN: invalid UTF-8"), equal line counts ("HYP has 3
 * lines but REF has 4 lines"). 0 on success; -1 with a message in err. */
int hg_score_files(const char *hyp_path, const char *ref_path,
                   struct hg_bleu *bleu, double *chrf, char *err,
                   size_t errlen);

#endif
