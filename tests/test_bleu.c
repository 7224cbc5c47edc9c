/* test_bleu.c - corpus BLEU (13a) and chrF2 (data/bleu.c):
 *   - the 13a tokenizer and whole-corpus scores against tables that
 *     sacreBLEU itself computed (tests/bleu_cases.h, made by
 *     tests/fixtures/gen_bleu_cases.py; no Python at test time),
 *   - a few scores worked out by hand below, independently of sacreBLEU,
 *   - properties: a corpus against itself, order of segments,
 *   - hg_score_files: line counts, invalid UTF-8, missing files. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/bleu.h"
#include "tests/bleu_cases.h"
#include "tests/hg_test.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (1.0 + fabs(b));
}

static void test_tokenizer(void)
{
    for (size_t i = 0; i < NELEM(tok_cases); i++) {
        char *t = hg_tokenize_13a(tok_cases[i].in, strlen(tok_cases[i].in));
        REQUIRE(t, "out of memory");
        EXPECT(strcmp(t, tok_cases[i].out) == 0, "13a(\"%s\") = \"%s\", want \"%s\"",
               tok_cases[i].in, t, tok_cases[i].out);
        free(t);
    }
    /* only the given bytes are read */
    char *t = hg_tokenize_13a("a,b and more", 3);
    EXPECT(t && strcmp(t, "a , b") == 0, "prefix: \"%s\"", t ? t : "(null)");
    free(t);
}

static void score_case(const struct bleu_case *c, struct hg_bleu *b,
                       double *chrf)
{
    struct hg_bleu_stats bs;
    struct hg_chrf_stats cs;
    memset(&bs, 0, sizeof(bs));
    memset(&cs, 0, sizeof(cs));
    for (int i = c->first; i < c->first + c->count; i++) {
        REQUIRE(hg_bleu_add(&bs, bleu_hyp[i], bleu_ref[i]) == 0, "oom");
        REQUIRE(hg_chrf_add(&cs, bleu_hyp[i], bleu_ref[i]) == 0, "oom");
    }
    hg_bleu_compute(&bs, b);
    *chrf = hg_chrf_compute(&cs);
}

static void test_sacrebleu_cases(void)
{
    for (size_t k = 0; k < NELEM(bleu_cases); k++) {
        const struct bleu_case *c = &bleu_cases[k];
        struct hg_bleu b;
        double chrf;
        score_case(c, &b, &chrf);
        char line[256];
        hg_bleu_format(&b, line, sizeof(line));
        EXPECT(close_to(b.score, c->bleu), "%s: BLEU %.17g, sacreBLEU %.17g",
               c->name, b.score, c->bleu);
        EXPECT(strcmp(line, c->line) == 0, "%s:\n  got  %s\n  want %s", c->name,
               line, c->line);
        EXPECT(close_to(chrf, c->chrf), "%s: chrF2 %.17g, sacreBLEU %.17g",
               c->name, chrf, c->chrf);
    }
}

static double bleu_of(const char *hyp, const char *ref, struct hg_bleu *b)
{
    struct hg_bleu_stats s;
    memset(&s, 0, sizeof(s));
    REQUIRE(hg_bleu_add(&s, hyp, ref) == 0, "oom");
    hg_bleu_compute(&s, b);
    return b->score;
}

static double chrf_of(const char *hyp, const char *ref)
{
    struct hg_chrf_stats s;
    memset(&s, 0, sizeof(s));
    REQUIRE(hg_chrf_add(&s, hyp, ref) == 0, "oom");
    return hg_chrf_compute(&s);
}

/* Worked out by hand, not by sacreBLEU. */
static void test_by_hand(void)
{
    struct hg_bleu b;
    /* hyp "the cat sat on the mat", ref "the cat is on the mat":
     * 1-grams 5/6 (sat), 2-grams 3/5 (the cat, on the, the mat),
     * 3-grams 1/4 (on the mat), 4-grams 0/3 -> exp smoothing 1/(2*3);
     * equal lengths, BP 1 */
    double want = 100 * exp((log(5.0 / 6) + log(3.0 / 5) + log(1.0 / 4) +
                             log(1.0 / 6)) / 4);
    EXPECT(close_to(bleu_of("the cat sat on the mat", "the cat is on the mat", &b),
                    want), "cat: %.17g, want %.17g", b.score, want);
    EXPECT(b.bp == 1.0 && b.hyp_len == 6 && b.ref_len == 6, "cat: bp %g", b.bp);
    /* clipping (Papineni's "the the the ..."): 7 x "the" against a
     * reference with 2 -> 2/7; no 2-gram "the the" in the reference: 0/6
     * -> 1/(2*6), 3-grams 1/(4*5), 4-grams 1/(8*4); ratio 7/6, BP 1 */
    want = 100 * exp((log(2.0 / 7) + log(1.0 / 12) + log(1.0 / 20) +
                      log(1.0 / 32)) / 4);
    EXPECT(close_to(bleu_of("the the the the the the the", "the cat is on the mat", &b),
                    want), "repeats: %.17g, want %.17g", b.score, want);
    /* brevity: 4 of 8 tokens, all n-grams right: BP = exp(1 - 8/4) */
    bleu_of("a b c d", "a b c d e f g h", &b);
    EXPECT(close_to(b.bp, exp(-1.0)) && close_to(b.score, 100 * exp(-1.0)),
           "brevity: bp %.17g score %.17g", b.bp, b.score);
    EXPECT(close_to(b.ratio, 0.5), "ratio %g", b.ratio);
    /* identical, >= 4 tokens: 100; disjoint: 0 */
    EXPECT(close_to(bleu_of("Él comió una manzana roja.", "Él comió una manzana roja.", &b),
                    100), "identical: %.17g", b.score);
    EXPECT(bleu_of("w x y z", "a b c d", &b) == 0.0, "disjoint: %g", b.score);
    EXPECT(b.precisions[0] == 0.0, "disjoint precision %g", b.precisions[0]);
    /* tokenization makes "mat." and "mat ." the same: 100 */
    EXPECT(close_to(bleu_of("the cat is on the mat.", "the cat is on the mat .", &b),
                    100), "tokenized period: %g", b.score);

    /* chrF, whitespace removed, code points:
     * "ab" vs "ab": orders 1, 2 perfect, 3..6 have no reference n-grams -> 100 */
    EXPECT(close_to(chrf_of("a b", "ab"), 100), "chrf ab %g", chrf_of("a b", "ab"));
    /* "abc" vs "abd": P = R = (2/3 + 1/2 + 0) / 3 -> F = P */
    double p = (2.0 / 3 + 1.0 / 2 + 0) / 3;
    EXPECT(close_to(chrf_of("abc", "abd"), 100 * p), "chrf abc %g", chrf_of("abc", "abd"));
    /* "año" vs "ano": 1-grams 2/3 (a, o), 2- and 3-grams 0 -> 100 * 2/9.
     * Counted in bytes it would be different. */
    p = (2.0 / 3) / 3;
    EXPECT(close_to(chrf_of("año", "ano"), 100 * p), "chrf año %.17g", chrf_of("año", "ano"));
    /* precision != recall: hyp "ab" vs ref "abcd": order 1 P 1 R 1/2,
     * order 2 P 1 R 1/3 (orders 3, 4 have no hyp n-grams: left out) */
    double P = 1.0, R = (0.5 + 1.0 / 3) / 2;
    double f = 100 * 5 * P * R / (4 * P + R);
    EXPECT(close_to(chrf_of("ab", "abcd"), f), "chrf ab/abcd %.17g want %.17g",
           chrf_of("ab", "abcd"), f);
    EXPECT(chrf_of("", "") == 0.0, "empty chrF");
}

/* a corpus against itself is 100; segment order does not matter */
static void test_properties(void)
{
    static const char *lines[] = {
        "Puedes cobrar cualquier coste escoges para apoyo de este Envase.",
        "Ver la Licencia para la lengua concreta que rige permisos.",
        "It costs $1,000.50 -- \"really\" (or so).",
        "a",
        "",
    };
    struct hg_bleu_stats s1, s2;
    struct hg_chrf_stats c1, c2;
    memset(&s1, 0, sizeof(s1));
    memset(&s2, 0, sizeof(s2));
    memset(&c1, 0, sizeof(c1));
    memset(&c2, 0, sizeof(c2));
    int n = (int)NELEM(lines);
    for (int i = 0; i < n; i++) {
        hg_bleu_add(&s1, lines[i], lines[i]);
        hg_chrf_add(&c1, lines[i], lines[i]);
        hg_bleu_add(&s2, lines[(i + 1) % n], lines[i]);
        hg_chrf_add(&c2, lines[(i + 1) % n], lines[i]);
    }
    struct hg_bleu b;
    hg_bleu_compute(&s1, &b);
    EXPECT(close_to(b.score, 100), "self BLEU %g", b.score);
    EXPECT(close_to(hg_chrf_compute(&c1), 100), "self chrF %g", hg_chrf_compute(&c1));
    hg_bleu_compute(&s2, &b);
    EXPECT(b.score < 5, "shifted BLEU %g", b.score);
    /* reversed order, same statistics */
    struct hg_bleu_stats s3;
    memset(&s3, 0, sizeof(s3));
    for (int i = n - 1; i >= 0; i--)
        hg_bleu_add(&s3, lines[(i + 1) % n], lines[i]);
    EXPECT(memcmp(&s2, &s3, sizeof(s2)) == 0, "order changes the statistics");
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    REQUIRE(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static void test_files(void)
{
    char dir[] = "/tmp/test_bleu.XXXXXX";
    REQUIRE(mkdtemp(dir), "mkdtemp");
    char ref[256], hyp[256], shorter[256], bad[256];
    snprintf(ref, sizeof(ref), "%s/ref.es", dir);
    snprintf(hyp, sizeof(hyp), "%s/hyp.es", dir);
    snprintf(shorter, sizeof(shorter), "%s/short.es", dir);
    snprintf(bad, sizeof(bad), "%s/bad.es", dir);
    write_file(ref, "the cat is on the mat\r\nEl niño come.\nuno dos tres cuatro\n");
    write_file(hyp, "the cat sat on the mat\nEl niño come.\nuno dos tres cuatro");
    write_file(shorter, "the cat\nEl niño\n");
    write_file(bad, "one\ntwo\nab \xc0\xaf cd\n");

    struct hg_bleu b;
    double chrf = -1;
    char err[512] = "";
    EXPECT(hg_score_files(hyp, ref, &b, &chrf, err, sizeof(err)) == 0, "%s", err);
    /* the same as adding the segments one by one (CRLF, no final newline) */
    struct hg_bleu_stats s;
    struct hg_chrf_stats c;
    memset(&s, 0, sizeof(s));
    memset(&c, 0, sizeof(c));
    const char *h[] = {"the cat sat on the mat", "El niño come.", "uno dos tres cuatro"};
    const char *r[] = {"the cat is on the mat", "El niño come.", "uno dos tres cuatro"};
    for (int i = 0; i < 3; i++) {
        hg_bleu_add(&s, h[i], r[i]);
        hg_chrf_add(&c, h[i], r[i]);
    }
    struct hg_bleu want;
    hg_bleu_compute(&s, &want);
    EXPECT(b.score == want.score && b.hyp_len == 14 && b.ref_len == 14,
           "file BLEU %g (%lld/%lld), want %g", b.score, (long long)b.hyp_len,
           (long long)b.ref_len, want.score);
    EXPECT(chrf == hg_chrf_compute(&c), "file chrF %g", chrf);

    /* line counts: both files and both counts named */
    EXPECT(hg_score_files(shorter, ref, &b, NULL, err, sizeof(err)) != 0, "short accepted");
    char msg[1024];
    snprintf(msg, sizeof(msg), "%s has 2 lines but %s has 3 lines", shorter, ref);
    EXPECT(strcmp(err, msg) == 0, "message '%s', want '%s'", err, msg);
    /* invalid UTF-8: file, line 3, byte column 4 */
    EXPECT(hg_score_files(bad, ref, &b, &chrf, err, sizeof(err)) != 0, "bad UTF-8 accepted");
    snprintf(msg, sizeof(msg), "%s:3:4: invalid UTF-8", bad);
    EXPECT(strncmp(err, msg, strlen(msg)) == 0, "message '%s', want '%s...'", err, msg);
    EXPECT(hg_score_files(ref, bad, &b, &chrf, err, sizeof(err)) != 0, "bad ref accepted");
    EXPECT(strncmp(err, msg, strlen(msg)) == 0, "message '%s', want '%s...'", err, msg);
    /* missing file */
    char missing[300];
    snprintf(missing, sizeof(missing), "%s/nothing.es", dir);
    EXPECT(hg_score_files(missing, ref, &b, &chrf, err, sizeof(err)) != 0, "missing accepted");
    EXPECT(strstr(err, "nothing.es") != NULL, "missing: '%s'", err);

    unlink(ref);
    unlink(hyp);
    unlink(shorter);
    unlink(bad);
    rmdir(dir);
}

int main(void)
{
    test_tokenizer();
    test_sacrebleu_cases();
    test_by_hand();
    test_properties();
    test_files();
    if (failures) {
        fprintf(stderr, "test_bleu: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_bleu: all passed (%zu tokenizer cases, %zu sacreBLEU corpora)\n",
           NELEM(tok_cases), NELEM(bleu_cases));
    return 0;
}
