/* bleu.c - corpus BLEU (13a tokenization) and chrF, as sacreBLEU 2.x
 * computes them by default; see bleu.h. The tokenizer replays sacreBLEU's
 * regular expressions one pass at a time with Python's re.sub semantics
 * (leftmost match, scanning on after it, matches never overlap); every
 * character the expressions name is ASCII, so working on UTF-8 bytes
 * gives the same result as working on code points. */
#define _POSIX_C_SOURCE 200809L
#include "data/bleu.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/text.h"

/* ------------------------------------------------------- whitespace */

/* Length of the Python-whitespace character at s[0..n), or 0. */
static size_t py_space_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F))
        return 1;
    if (c == 0xC2 && n >= 2 && (s[1] == 0x85 || s[1] == 0xA0))
        return 2;
    if (c == 0xE1 && n >= 3 && s[1] == 0x9A && s[2] == 0x80) /* U+1680 */
        return 3;
    if (c == 0xE2 && n >= 3) {
        unsigned c1 = s[1], c2 = s[2];
        if (c1 == 0x80 && ((c2 >= 0x80 && c2 <= 0x8A) || /* U+2000..200A */
                           c2 == 0xA8 || c2 == 0xA9 ||    /* U+2028, 2029 */
                           c2 == 0xAF))                   /* U+202F */
            return 3;
        if (c1 == 0x81 && c2 == 0x9F) /* U+205F */
            return 3;
    }
    if (c == 0xE3 && n >= 3 && s[1] == 0x80 && s[2] == 0x80) /* U+3000 */
        return 3;
    return 0;
}

/* n after Python's str.rstrip(): trailing whitespace removed. */
static size_t py_rstrip(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (;;) {
        size_t k = 0;
        if (n >= 1 && py_space_len(u + n - 1, 1) == 1)
            k = 1;
        else if (n >= 2 && py_space_len(u + n - 2, 2) == 2)
            k = 2;
        else if (n >= 3 && py_space_len(u + n - 3, 3) == 3)
            k = 3;
        if (!k)
            return n;
        n -= k;
    }
}

/* ------------------------------------------------------- a byte buffer */

struct buf {
    char *p;
    size_t n, cap;
    int oom;
};

static void put(struct buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 64;
        while (b->n + n + 1 > nc)
            nc *= 2;
        char *p = realloc(b->p, nc);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void putc1(struct buf *b, char c) { put(b, &c, 1); }

/* src.replace(from, to) into dst (dst emptied first). */
static void replace_all(struct buf *dst, const char *s, size_t n,
                        const char *from, const char *to)
{
    size_t fl = strlen(from), tl = strlen(to), i = 0;
    dst->n = 0;
    put(dst, "", 0);
    while (i < n) {
        if (n - i >= fl && memcmp(s + i, from, fl) == 0) {
            put(dst, to, tl);
            i += fl;
        } else {
            putc1(dst, s[i]);
            i++;
        }
    }
}

/* ------------------------------------------------------- 13a */

static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* r'([\{-\~\[-\` -\&\(-\+\:-\@\/])' */
static int is_punct13a(unsigned char c)
{
    return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') ||
           (c >= ' ' && c <= '&') || (c >= '(' && c <= '+') ||
           (c >= ':' && c <= '@') || c == '/';
}

char *hg_tokenize_13a(const char *line, size_t len)
{
    struct buf a = {0}, b = {0};
    len = py_rstrip(line, len);
    /* language-independent part */
    replace_all(&a, line, len, "<skipped>", "");
    replace_all(&b, a.p, a.n, "-\n", "");
    replace_all(&a, b.p, b.n, "\n", " ");
    if (a.oom || b.oom)
        goto fail;
    if (memchr(a.p, '&', a.n)) {
        replace_all(&b, a.p, a.n, "&quot;", "\"");
        replace_all(&a, b.p, b.n, "&amp;", "&");
        replace_all(&b, a.p, a.n, "&lt;", "<");
        replace_all(&a, b.p, b.n, "&gt;", ">");
    }
    /* f' {line} ', then r' \1 ' for the punctuation class */
    b.n = 0;
    putc1(&b, ' ');
    for (size_t i = 0; i < a.n; i++) {
        unsigned char c = (unsigned char)a.p[i];
        if (is_punct13a(c)) {
            char t[3] = {' ', (char)c, ' '};
            put(&b, t, 3);
        } else {
            putc1(&b, (char)c);
        }
    }
    putc1(&b, ' ');
    /* r'([^0-9])([\.,])' -> r'\1 \2 ' */
    a.n = 0;
    put(&a, "", 0);
    for (size_t i = 0; i < b.n;) {
        unsigned char c = (unsigned char)b.p[i];
        if (i + 1 < b.n && !is_digit(c) && (b.p[i + 1] == '.' || b.p[i + 1] == ',')) {
            char t[4] = {(char)c, ' ', b.p[i + 1], ' '};
            put(&a, t, 4);
            i += 2;
        } else {
            putc1(&a, (char)c);
            i++;
        }
    }
    /* r'([\.,])([^0-9])' -> r' \1 \2' */
    b.n = 0;
    put(&b, "", 0);
    for (size_t i = 0; i < a.n;) {
        char c = a.p[i];
        if ((c == '.' || c == ',') && i + 1 < a.n &&
            !is_digit((unsigned char)a.p[i + 1])) {
            char t[4] = {' ', c, ' ', a.p[i + 1]};
            put(&b, t, 4);
            i += 2;
        } else {
            putc1(&b, c);
            i++;
        }
    }
    /* r'([0-9])(-)' -> r'\1 \2 ' */
    a.n = 0;
    put(&a, "", 0);
    for (size_t i = 0; i < b.n;) {
        char c = b.p[i];
        if (is_digit((unsigned char)c) && i + 1 < b.n && b.p[i + 1] == '-') {
            char t[4] = {c, ' ', '-', ' '};
            put(&a, t, 4);
            i += 2;
        } else {
            putc1(&a, c);
            i++;
        }
    }
    /* ' '.join(line.split()) */
    b.n = 0;
    put(&b, "", 0);
    const unsigned char *u = (const unsigned char *)a.p;
    int need_space = 0;
    for (size_t i = 0; i < a.n;) {
        size_t k = py_space_len(u + i, a.n - i);
        if (k) {
            i += k;
            need_space = b.n > 0;
            continue;
        }
        if (need_space) {
            putc1(&b, ' ');
            need_space = 0;
        }
        putc1(&b, a.p[i]);
        i++;
    }
    if (a.oom || b.oom)
        goto fail;
    free(a.p);
    return b.p;
fail:
    free(a.p);
    free(b.p);
    return NULL;
}

/* ------------------------------------------------------- n-gram counts */

/* A map from byte strings (pointers into the segment's own text, not
 * copied) to a reference and a hypothesis count; the order is part of the
 * key. Cleared for every segment. */
struct ngram {
    const char *s;
    uint32_t len, order;
    int64_t ref, hyp;
};

struct ngram_map {
    struct ngram *slot;
    size_t cap, used;
};

static uint64_t hash_bytes(const char *s, size_t n, uint32_t order)
{
    uint64_t h = 1469598103934665603ULL ^ order;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h ^ (h >> 29);
}

/* Empties the map and makes room for at least want keys. */
static int map_reset(struct ngram_map *m, size_t want)
{
    size_t cap = 64;
    while (cap < 2 * want + 2)
        cap *= 2;
    if (cap > m->cap) {
        struct ngram *p = malloc(cap * sizeof(*p));
        if (!p)
            return -1;
        free(m->slot);
        m->slot = p;
        m->cap = cap;
    }
    memset(m->slot, 0, m->cap * sizeof(*m->slot));
    m->used = 0;
    return 0;
}

static struct ngram *map_get(struct ngram_map *m, const char *s, size_t n,
                             uint32_t order)
{
    size_t mask = m->cap - 1;
    size_t i = (size_t)hash_bytes(s, n, order) & mask;
    for (;;) {
        struct ngram *e = &m->slot[i];
        if (!e->s) {
            e->s = s;
            e->len = (uint32_t)n;
            e->order = order;
            m->used++;
            return e;
        }
        if (e->len == n && e->order == order && memcmp(e->s, s, n) == 0)
            return e;
        i = (i + 1) & mask;
    }
}

/* ------------------------------------------------------- BLEU */

/* Token start offsets and lengths of a space-joined token string. */
struct toks {
    size_t *off, *len;
    size_t n, cap;
};

static int split_tokens(const char *s, struct toks *t)
{
    t->n = 0;
    size_t i = 0, n = strlen(s);
    while (i < n) {
        size_t j = i;
        while (j < n && s[j] != ' ')
            j++;
        if (t->n == t->cap) {
            size_t nc = t->cap ? 2 * t->cap : 64;
            size_t *o = realloc(t->off, nc * sizeof(*o));
            if (!o)
                return -1;
            t->off = o;
            size_t *l = realloc(t->len, nc * sizeof(*l));
            if (!l)
                return -1;
            t->len = l;
            t->cap = nc;
        }
        t->off[t->n] = i;
        t->len[t->n] = j - i;
        t->n++;
        i = j + 1;
    }
    return 0;
}

int hg_bleu_add(struct hg_bleu_stats *st, const char *hyp, const char *ref)
{
    int rc = -1;
    struct toks th = {0}, tr = {0};
    struct ngram_map m = {0};
    char *h = hg_tokenize_13a(hyp, strlen(hyp));
    char *r = hg_tokenize_13a(ref, strlen(ref));
    if (!h || !r || split_tokens(h, &th) || split_tokens(r, &tr) ||
        map_reset(&m, HG_BLEU_ORDER * (th.n + tr.n)))
        goto out;
    /* an n-gram is the substring from its first token's start to its last
     * token's end: tokens hold no spaces, so it is unambiguous */
    for (uint32_t n = 1; n <= HG_BLEU_ORDER; n++) {
        for (size_t i = 0; i + n <= tr.n; i++) {
            size_t a = tr.off[i], z = tr.off[i + n - 1] + tr.len[i + n - 1];
            map_get(&m, r + a, z - a, n)->ref++;
        }
        for (size_t i = 0; i + n <= th.n; i++) {
            size_t a = th.off[i], z = th.off[i + n - 1] + th.len[i + n - 1];
            struct ngram *e = map_get(&m, h + a, z - a, n);
            e->hyp++;
            st->total[n - 1]++;
            /* clipped: the k-th copy matches while k <= the ref count */
            if (e->hyp <= e->ref)
                st->correct[n - 1]++;
        }
    }
    st->hyp_len += (int64_t)th.n;
    st->ref_len += (int64_t)tr.n;
    rc = 0;
out:
    free(h);
    free(r);
    free(th.off);
    free(th.len);
    free(tr.off);
    free(tr.len);
    free(m.slot);
    return rc;
}

/* sacrebleu.utils.my_log */
static double my_log(double x) { return x == 0.0 ? -9999999999.0 : log(x); }

void hg_bleu_compute(const struct hg_bleu_stats *st, struct hg_bleu *out)
{
    memset(out, 0, sizeof(*out));
    int64_t sys_len = st->hyp_len, ref_len = st->ref_len;
    out->hyp_len = sys_len;
    out->ref_len = ref_len;
    out->ratio = ref_len ? (double)sys_len / (double)ref_len : 0.0;
    out->bp = 1.0;
    if (sys_len < ref_len)
        out->bp = sys_len > 0 ? exp(1.0 - (double)ref_len / (double)sys_len) : 0.0;
    int any = 0;
    for (int n = 0; n < HG_BLEU_ORDER; n++)
        any |= st->correct[n] != 0;
    if (!any)
        return; /* score 0, precisions 0 (sacreBLEU #141) */
    double smooth = 1.0;
    for (int n = 0; n < HG_BLEU_ORDER; n++) {
        if (st->total[n] == 0)
            break;
        if (st->correct[n] == 0) {
            smooth *= 2; /* 'exp' smoothing */
            out->precisions[n] = 100.0 / (smooth * (double)st->total[n]);
        } else {
            out->precisions[n] =
                100.0 * (double)st->correct[n] / (double)st->total[n];
        }
    }
    double sum = 0.0;
    for (int n = 0; n < HG_BLEU_ORDER; n++)
        sum += my_log(out->precisions[n]);
    out->score = out->bp * exp(sum / HG_BLEU_ORDER);
}

int hg_bleu_format(const struct hg_bleu *b, char *buf, size_t len)
{
    return snprintf(buf, len,
                    "BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f "
                    "hyp_len = %lld ref_len = %lld)",
                    b->score, b->precisions[0], b->precisions[1],
                    b->precisions[2], b->precisions[3], b->bp, b->ratio,
                    (long long)b->hyp_len, (long long)b->ref_len);
}

/* ------------------------------------------------------- chrF */

/* The line with all whitespace removed, and the byte offset of each code
 * point (offs[count] = length). */
static char *squeeze(const char *s, size_t **offs, size_t *count)
{
    size_t n = strlen(s);
    char *o = malloc(n + 1);
    size_t *off = malloc((n + 1) * sizeof(*off));
    if (!o || !off) {
        free(o);
        free(off);
        return NULL;
    }
    const unsigned char *u = (const unsigned char *)s;
    size_t k = 0, c = 0;
    for (size_t i = 0; i < n;) {
        size_t w = py_space_len(u + i, n - i);
        if (w) {
            i += w;
            continue;
        }
        size_t l = (size_t)hg_utf8_seqlen(u[i]);
        if (l > n - i)
            l = n - i;
        off[c++] = k;
        memcpy(o + k, s + i, l);
        k += l;
        i += l;
    }
    off[c] = k;
    o[k] = 0;
    *offs = off;
    *count = c;
    return o;
}

int hg_chrf_add(struct hg_chrf_stats *st, const char *hyp, const char *ref)
{
    int rc = -1;
    size_t *oh = NULL, *orf = NULL, nh = 0, nr = 0;
    struct ngram_map m = {0};
    char *h = squeeze(hyp, &oh, &nh);
    char *r = squeeze(ref, &orf, &nr);
    if (!h || !r || map_reset(&m, HG_CHRF_ORDER * (nh + nr)))
        goto out;
    for (uint32_t n = 1; n <= HG_CHRF_ORDER; n++) {
        int64_t nref = 0, nhyp = 0, match = 0;
        for (size_t i = 0; i + n <= nr; i++) {
            map_get(&m, r + orf[i], orf[i + n] - orf[i], n)->ref++;
            nref++;
        }
        for (size_t i = 0; i + n <= nh; i++) {
            struct ngram *e = map_get(&m, h + oh[i], oh[i + n] - oh[i], n);
            e->hyp++;
            nhyp++;
            if (e->hyp <= e->ref)
                match++;
        }
        /* sacreBLEU: no hypothesis count where the reference has none */
        st->hyp[n - 1] += nref ? nhyp : 0;
        st->ref[n - 1] += nref;
        st->match[n - 1] += match;
    }
    rc = 0;
out:
    free(h);
    free(r);
    free(oh);
    free(orf);
    free(m.slot);
    return rc;
}

double hg_chrf_compute(const struct hg_chrf_stats *st)
{
    const double factor = HG_CHRF_BETA * HG_CHRF_BETA;
    double avg_prec = 0.0, avg_rec = 0.0;
    int eff = 0;
    for (int i = 0; i < HG_CHRF_ORDER; i++) {
        if (st->hyp[i] > 0 && st->ref[i] > 0) {
            avg_prec += (double)st->match[i] / (double)st->hyp[i];
            avg_rec += (double)st->match[i] / (double)st->ref[i];
            eff++;
        }
    }
    if (eff == 0)
        return 0.0;
    avg_prec /= eff;
    avg_rec /= eff;
    if (avg_prec + avg_rec == 0.0)
        return 0.0;
    double score = (1 + factor) * avg_prec * avg_rec;
    score /= factor * avg_prec + avg_rec;
    return 100 * score;
}

/* ------------------------------------------------------- files */

struct lines {
    char **s;
    size_t n, cap;
};

static void lines_free(struct lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->s[i]);
    free(l->s);
    memset(l, 0, sizeof(*l));
}

static int errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int read_lines(const char *path, struct lines *out, char *err,
                      size_t errlen)
{
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f)
        return errf(err, errlen, "%s: %s", path, strerror(errno));
    struct hg_line_reader r;
    hg_line_reader_init(&r, f, is_stdin ? "(stdin)" : path);
    int rc = 0;
    for (;;) {
        char *line;
        size_t len;
        int got = hg_line_reader_next(&r, &line, &len, err, errlen);
        if (got < 0) {
            rc = -1;
            break;
        }
        if (got == 0)
            break;
        if (out->n == out->cap) {
            size_t nc = out->cap ? 2 * out->cap : 1024;
            char **p = realloc(out->s, nc * sizeof(*p));
            if (!p) {
                rc = errf(err, errlen, "%s: out of memory", path);
                break;
            }
            out->s = p;
            out->cap = nc;
        }
        char *copy = malloc(len + 1);
        if (!copy) {
            rc = errf(err, errlen, "%s: out of memory", path);
            break;
        }
        memcpy(copy, line, len + 1);
        out->s[out->n++] = copy;
    }
    hg_line_reader_free(&r);
    if (!is_stdin)
        fclose(f);
    if (rc)
        lines_free(out);
    return rc;
}

int hg_score_files(const char *hyp_path, const char *ref_path,
                   struct hg_bleu *bleu, double *chrf, char *err,
                   size_t errlen)
{
    struct lines h = {0}, r = {0};
    int rc = -1;
    if (read_lines(hyp_path, &h, err, errlen) ||
        read_lines(ref_path, &r, err, errlen))
        goto out;
    if (h.n != r.n) {
        errf(err, errlen, "%s has %zu lines but %s has %zu lines", hyp_path,
             h.n, ref_path, r.n);
        goto out;
    }
    struct hg_bleu_stats bs;
    struct hg_chrf_stats cs;
    memset(&bs, 0, sizeof(bs));
    memset(&cs, 0, sizeof(cs));
    for (size_t i = 0; i < h.n; i++) {
        if ((bleu && hg_bleu_add(&bs, h.s[i], r.s[i])) ||
            (chrf && hg_chrf_add(&cs, h.s[i], r.s[i]))) {
            errf(err, errlen, "out of memory");
            goto out;
        }
    }
    if (bleu)
        hg_bleu_compute(&bs, bleu);
    if (chrf)
        *chrf = hg_chrf_compute(&cs);
    rc = 0;
out:
    lines_free(&h);
    lines_free(&r);
    return rc;
}
