/* test_text.c - the text side of hgpreprocess: strict UTF-8 validation
 * (every class of malformed sequence), the line reader, BPE learning on a
 * corpus whose merges are worked out by hand below, BPE application,
 * codes and dictionary files, and a fuzz loop over random bytes. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/bpe.h"
#include "data/dict.h"
#include "data/text.h"
#include "tests/hg_test.h"


/* ------------------------------------------------------------- UTF-8 */

/* A slow, obviously-correct reference: decode, then check the value. */
static int ref_utf8(const unsigned char *s, size_t n, size_t *bad)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t len;
        unsigned cp, min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            len = 2, cp = c & 0x1F, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3, cp = c & 0x0F, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4, cp = c & 0x07, min = 0x10000;
        } else {
            *bad = i;
            return -1;
        }
        if (n - i < len) {
            *bad = i;
            return -1;
        }
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) {
                *bad = i;
                return -1;
            }
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            *bad = i;
            return -1;
        }
        i += len;
    }
    return 0;
}

struct ucase {
    const char *s;
    size_t n;
    int ok;
    size_t bad;
    const char *what;
};

#define U(str, ok, bad, what) {str, sizeof(str) - 1, ok, bad, what}

static const struct ucase ucases[] = {
    U("", 1, 0, "empty"),
    U("plain ascii text, long enough for the fast path", 1, 0, "ascii"),
    U("\xC2\x80", 1, 0, "U+0080"),
    U("\xDF\xBF", 1, 0, "U+07FF"),
    U("\xE0\xA0\x80", 1, 0, "U+0800"),
    U("\xED\x9F\xBF", 1, 0, "U+D7FF"),
    U("\xEE\x80\x80", 1, 0, "U+E000"),
    U("\xEF\xBF\xBF", 1, 0, "U+FFFF"),
    U("\xF0\x90\x80\x80", 1, 0, "U+10000"),
    U("\xF4\x8F\xBF\xBF", 1, 0, "U+10FFFF"),
    U("ma\xC3\xB1\x61na \xE2\x82\xAC \xF0\x9F\x98\x80", 1, 0, "mixed"),
    /* stray continuation bytes */
    U("\x80", 0, 0, "lone continuation"),
    U("abcdefghij\xBF", 0, 10, "continuation after the fast path"),
    /* overlong forms */
    U("\xC0\x80", 0, 0, "overlong NUL"),
    U("a\xC1\xBF", 0, 1, "overlong 2-byte"),
    U("\xE0\x80\x80", 0, 0, "overlong 3-byte"),
    U("\xE0\x9F\xBF", 0, 0, "overlong 3-byte max"),
    U("\xF0\x80\x80\x80", 0, 0, "overlong 4-byte"),
    U("\xF0\x8F\xBF\xBF", 0, 0, "overlong 4-byte max"),
    /* surrogates */
    U("\xED\xA0\x80", 0, 0, "U+D800"),
    U("xy\xED\xBF\xBF", 0, 2, "U+DFFF"),
    /* above U+10FFFF, impossible lead bytes */
    U("\xF4\x90\x80\x80", 0, 0, "U+110000"),
    U("\xF5\x80\x80\x80", 0, 0, "lead 0xF5"),
    U("\xF8\x88\x80\x80\x80", 0, 0, "5-byte form"),
    U("\xFC\x84\x80\x80\x80\x80", 0, 0, "6-byte form"),
    U("\xFE", 0, 0, "0xFE"),
    U("ok\xFF", 0, 2, "0xFF"),
    /* truncated sequences */
    U("\xC3", 0, 0, "truncated 2-byte"),
    U("ab\xE2\x82", 0, 2, "truncated 3-byte"),
    U("\xF0\x9F\x98", 0, 0, "truncated 4-byte"),
    U("\xE2\x82" "a", 0, 0, "truncated then ascii"),
    U("\xC3\x28", 0, 0, "bad continuation"),
    U("\xF0\x9F\x28\x80", 0, 0, "bad 3rd byte"),
};

static void test_utf8(void)
{
    for (size_t i = 0; i < sizeof(ucases) / sizeof(ucases[0]); i++) {
        const struct ucase *c = &ucases[i];
        size_t bad = 999, rbad = 999;
        int rc = hg_text_validate_utf8(c->s, c->n, &bad);
        int rr = ref_utf8((const unsigned char *)c->s, c->n, &rbad);
        EXPECT((rc == 0) == c->ok, "%s: rc %d", c->what, rc);
        EXPECT((rr == 0) == c->ok, "%s: reference rc %d", c->what, rr);
        if (!c->ok)
            EXPECT(bad == c->bad, "%s: offset %zu, expected %zu", c->what, bad,
                   c->bad);
        EXPECT(hg_text_validate_utf8(c->s, c->n, NULL) == rc, "%s: NULL", c->what);
    }
}

/* ------------------------------------------------------- line reader */

static void test_lines(void)
{
    static char good[] = "a b\r\nsecond\n\n  tail";
    FILE *f = fmemopen(good, sizeof(good) - 1, "r");
    struct hg_line_reader r;
    hg_line_reader_init(&r, f, "good.txt");
    const char *want[] = {"a b", "second", "", "  tail"};
    char *line, err[256];
    size_t len;
    int k = 0, rc;
    while ((rc = hg_line_reader_next(&r, &line, &len, err, sizeof(err))) == 1) {
        EXPECT(k < 4 && strcmp(line, want[k]) == 0 && len == strlen(want[k]),
               "line %d: '%s'", k + 1, line);
        EXPECT(r.lineno == k + 1, "lineno %lld", (long long)r.lineno);
        k++;
    }
    EXPECT(rc == 0 && k == 4, "rc %d, %d lines", rc, k);
    hg_line_reader_free(&r);
    fclose(f);

    static char bad[] = "fine\nbad \xC3\x28 x\n";
    f = fmemopen(bad, sizeof(bad) - 1, "r");
    hg_line_reader_init(&r, f, "bad.txt");
    EXPECT(hg_line_reader_next(&r, &line, &len, err, sizeof(err)) == 1, "line 1");
    rc = hg_line_reader_next(&r, &line, &len, err, sizeof(err));
    EXPECT(rc == -1 && strstr(err, "bad.txt:2:5:"), "rc %d: %s", rc, err);
    hg_line_reader_free(&r);
    fclose(f);

    static char nul[] = "x\0y\n";
    f = fmemopen(nul, sizeof(nul) - 1, "r");
    hg_line_reader_init(&r, f, "nul.txt");
    rc = hg_line_reader_next(&r, &line, &len, err, sizeof(err));
    EXPECT(rc == -1 && strstr(err, "nul.txt:1:2:"), "rc %d: %s", rc, err);
    hg_line_reader_free(&r);
    fclose(f);

    char s[] = " \tthe  quick\vbrown\r\n";
    char **tok = NULL;
    size_t cap = 0;
    int64_t n = hg_text_split(s, &tok, &cap);
    EXPECT(n == 3 && !strcmp(tok[0], "the") && !strcmp(tok[1], "quick") &&
               !strcmp(tok[2], "brown"), "split: %lld", (long long)n);
    char e[] = "   ";
    EXPECT(hg_text_split(e, &tok, &cap) == 0, "blank split");
    free(tok);
}

/* --------------------------------------------------------------- BPE */

/* Sennrich et al.'s example: low 5, lower 2, newest 6, widest 3. By hand:
 *  e s = 9, s t</w> = 9: tie, the greater first symbol wins ("s" > "e")
 *  1 s t</w>      2 e st</w> (9)       3 l o (7)
 *  4 w est</w>    (ties at 6 with "n e", "e w": "w" is greatest)
 *  5 n e          (6, ties "e west</w>": "n" > "e")
 *  6 ne west</w> (6)  7 lo w</w> (5)
 *  8 w i          (ties at 3 with "i d", "d est</w>")
 *  9 wi d         ("wi" > "d")           10 wid est</w> (3)
 *  11 w e (2, ties "lo w", "e r</w>")  12 we r</w>  13 lo wer</w>
 * then nothing is left to merge. */
static const char *const want_merges[13][2] = {
    {"s", "t</w>"}, {"e", "st</w>"}, {"l", "o"}, {"w", "est</w>"},
    {"n", "e"}, {"ne", "west</w>"}, {"lo", "w</w>"}, {"w", "i"},
    {"wi", "d"}, {"wid", "est</w>"}, {"w", "e"}, {"we", "r</w>"},
    {"lo", "wer</w>"}};

static void segment_is(struct hg_bpe *b, const char *word, const char *want)
{
    const int32_t *t;
    int n = hg_bpe_segment(b, word, strlen(word), &t);
    char got[256] = "";
    for (int i = 0; i < n; i++) {
        if (i)
            strcat(got, " ");
        strcat(got, hg_bpe_token(b, t[i]));
    }
    EXPECT(strcmp(got, want) == 0, "%s -> '%s', expected '%s'", word, got, want);
}

static void test_bpe(void)
{
    struct hg_bpe_vocab *v = hg_bpe_vocab_new();
    hg_bpe_vocab_add(v, "low", 3, 5);
    hg_bpe_vocab_add(v, "lower", 5, 2);
    hg_bpe_vocab_add(v, "newest", 6, 4);
    hg_bpe_vocab_add(v, "newest", 6, 2); /* counts accumulate */
    hg_bpe_vocab_add(v, "widest", 6, 3);
    char err[256];
    struct hg_bpe *b;
    EXPECT(hg_bpe_learn(&b, v, 100, 2, NULL, err, sizeof(err)) == 0, "%s", err);
    EXPECT(hg_bpe_nmerges(b) == 13, "%d merges", hg_bpe_nmerges(b));
    for (int i = 0; i < hg_bpe_nmerges(b) && i < 13; i++) {
        const char *x, *y;
        hg_bpe_merge(b, i, &x, &y);
        EXPECT(!strcmp(x, want_merges[i][0]) && !strcmp(y, want_merges[i][1]),
               "merge %d: '%s %s', expected '%s %s'", i + 1, x, y,
               want_merges[i][0], want_merges[i][1]);
    }
    segment_is(b, "lower", "lower");
    hg_bpe_free(b);

    /* 10 merges, through a codes file */
    EXPECT(hg_bpe_learn(&b, v, 10, 2, NULL, err, sizeof(err)) == 0, "%s", err);
    char path[] = "/tmp/test_text_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    EXPECT(hg_bpe_save(b, path, err, sizeof(err)) == 0, "%s", err);
    hg_bpe_free(b);
    FILE *f = fopen(path, "r");
    char line[64];
    EXPECT(fgets(line, sizeof(line), f) && !strcmp(line, "#version: 0.2\n"),
           "header '%s'", line);
    EXPECT(fgets(line, sizeof(line), f) && !strcmp(line, "s t</w>\n"),
           "first merge '%s'", line);
    fclose(f);
    EXPECT(hg_bpe_load(&b, path, err, sizeof(err)) == 0, "%s", err);
    EXPECT(hg_bpe_nmerges(b) == 10, "%d merges loaded", hg_bpe_nmerges(b));
    segment_is(b, "lowest", "lo@@ west");
    segment_is(b, "newer", "ne@@ w@@ e@@ r");
    segment_is(b, "low", "low");
    segment_is(b, "widest", "widest");
    segment_is(b, "lowest", "lo@@ west"); /* from the cache */
    segment_is(b, "x", "x");
    segment_is(b, "\xC3\xB1u", "\xC3\xB1@@ u"); /* code points, not bytes */
    hg_bpe_free(b);

    /* min_freq: every pair occurs once -> no merge */
    struct hg_bpe_vocab *v1 = hg_bpe_vocab_new();
    hg_bpe_vocab_add(v1, "abc", 3, 1);
    EXPECT(hg_bpe_learn(&b, v1, 10, 2, NULL, err, sizeof(err)) == 0, "%s", err);
    EXPECT(hg_bpe_nmerges(b) == 0, "%d merges", hg_bpe_nmerges(b));
    hg_bpe_free(b);
    hg_bpe_vocab_free(v1);

    /* repeated symbols: "aaaa" x3 is a a a a</w>: "a a" occurs 6 times,
     * "a a</w>" 3; applying "a a" goes left to right: aa a a</w>. */
    struct hg_bpe_vocab *v2 = hg_bpe_vocab_new();
    hg_bpe_vocab_add(v2, "aaaa", 4, 3);
    EXPECT(hg_bpe_learn(&b, v2, 1, 2, NULL, err, sizeof(err)) == 0, "%s", err);
    segment_is(b, "aaaa", "aa@@ a@@ a");
    segment_is(b, "aaaaa", "aa@@ aa@@ a");
    hg_bpe_free(b);
    hg_bpe_vocab_free(v2);

    /* a malformed codes file names its line */
    f = fopen(path, "w");
    fputs("#version: 0.2\na b\nthree symbols here\n", f);
    fclose(f);
    EXPECT(hg_bpe_load(&b, path, err, sizeof(err)) == -1 &&
               strstr(err, ":3:"), "%s", err);
    unlink(path);
    hg_bpe_vocab_free(v);
}

/* ---------------------------------------------------------------- dict */

static void test_dict(void)
{
    struct hg_dict *d = hg_dict_new(NULL, 0);
    hg_dict_add(d, "b", 1, 3);
    hg_dict_add(d, "a", 1, 3);
    hg_dict_add(d, "c", 1, 5);
    hg_dict_add(d, "d", 1, 1);
    hg_dict_add(d, "B", 1, 3);
    EXPECT(hg_dict_finalize(d, 2, -1) == 0, "finalize");
    const char *want[] = {"<s>", "<pad>", "</s>", "<unk>", "c", "B", "a", "b"};
    EXPECT(hg_dict_size(d) == 8, "size %d", hg_dict_size(d));
    for (int i = 0; i < 8 && i < hg_dict_size(d); i++)
        EXPECT(!strcmp(hg_dict_symbol(d, i), want[i]), "id %d: %s", i,
               hg_dict_symbol(d, i));
    EXPECT(hg_dict_index(d, "d", 1) == HG_DICT_UNK, "thresholded");
    EXPECT(hg_dict_index(d, "zz", 2) == HG_DICT_UNK, "unknown");
    EXPECT(hg_dict_index(d, "a", 1) == 6, "a");
    EXPECT(hg_dict_index(d, "</s>", 4) == HG_DICT_EOS, "eos");
    char path[] = "/tmp/test_dict_XXXXXX", err[256];
    int fd = mkstemp(path);
    close(fd);
    EXPECT(hg_dict_save(d, path, err, sizeof(err)) == 0, "%s", err);
    struct hg_dict *e;
    EXPECT(hg_dict_load(&e, path, NULL, 0, err, sizeof(err)) == 0, "%s", err);
    EXPECT(hg_dict_size(e) == 8, "loaded size %d", hg_dict_size(e));
    for (int i = 0; i < 8 && i < hg_dict_size(e); i++)
        EXPECT(!strcmp(hg_dict_symbol(e, i), want[i]) &&
                   hg_dict_count(e, i) == hg_dict_count(d, i),
               "loaded id %d", i);
    hg_dict_free(e);
    hg_dict_free(d);

    /* a fairseq dict.txt (no specials), with an extra special */
    FILE *f = fopen(path, "w");
    fputs("hello 10\nworld 7 #fairseq:overwrite\n", f);
    fclose(f);
    const char *extra[] = {"[CLS]"};
    EXPECT(hg_dict_load(&e, path, extra, 1, err, sizeof(err)) == 0, "%s", err);
    EXPECT(hg_dict_size(e) == 7 && hg_dict_index(e, "hello", 5) == 5 &&
               hg_dict_index(e, "world", 5) == 6 &&
               hg_dict_index(e, "[CLS]", 5) == 4, "fairseq file");
    hg_dict_free(e);
    f = fopen(path, "w");
    fputs("hello 10\nhello 3\n", f);
    fclose(f);
    EXPECT(hg_dict_load(&e, path, NULL, 0, err, sizeof(err)) == -1 &&
               strstr(err, ":2:"), "duplicate: %s", err);
    f = fopen(path, "w");
    fputs("hello ten\n", f);
    fclose(f);
    EXPECT(hg_dict_load(&e, path, NULL, 0, err, sizeof(err)) == -1 &&
               strstr(err, ":1:"), "bad count: %s", err);
    unlink(path);
}

/* ---------------------------------------------------------------- fuzz */

static uint64_t rs = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

static void test_fuzz(int iters)
{
    static const unsigned char interesting[] = {
        0x00, 0x0A, 0x0D, 0x20, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0,
        0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
    unsigned char buf[300];
    char err[256];
    for (int it = 0; it < iters; it++) {
        size_t n = rnd() % sizeof(buf);
        int mode = (int)(rnd() % 3);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = rnd();
            if (mode == 0)
                buf[i] = (unsigned char)r;
            else if (mode == 1)
                buf[i] = interesting[(r >> 8) % sizeof(interesting)];
            else
                buf[i] = (r & 7) ? (unsigned char)('a' + (r >> 8) % 26)
                                 : interesting[(r >> 8) % sizeof(interesting)];
        }
        size_t bad = 0, rbad = 0;
        int rc = hg_text_validate_utf8((const char *)buf, n, &bad);
        int rr = ref_utf8(buf, n, &rbad);
        EXPECT(rc == rr && (rc == 0 || bad == rbad),
               "iteration %d: rc %d/%d offset %zu/%zu", it, rc, rr, bad, rbad);
        if (failures > 20)
            return;
        /* the line reader on the same bytes: never crashes, stops at the
         * first bad line, and a good line really is valid */
        FILE *f = fmemopen(buf, n ? n : 1, "r");
        if (!f)
            continue;
        if (!n)
            fgetc(f);
        struct hg_line_reader r;
        hg_line_reader_init(&r, f, "fuzz");
        char *line, **tok = NULL;
        size_t len, cap = 0;
        int lr;
        while ((lr = hg_line_reader_next(&r, &line, &len, err, sizeof(err))) == 1) {
            EXPECT(hg_text_validate_utf8(line, len, NULL) == 0 &&
                       strlen(line) == len, "iteration %d: line", it);
            EXPECT(hg_text_split(line, &tok, &cap) >= 0, "split");
        }
        EXPECT(lr == 0 || strncmp(err, "fuzz:", 5) == 0, "message '%s'", err);
        free(tok);
        hg_line_reader_free(&r);
        fclose(f);
    }
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 20000;
    test_utf8();
    test_lines();
    test_bpe();
    test_dict();
    test_fuzz(iters);
    if (failures) {
        fprintf(stderr, "test_text: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_text: all passed (%d fuzz iterations)\n", iters);
    return 0;
}
