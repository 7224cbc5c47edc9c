/* text.c - UTF-8 validation, line reading, tokenizing, string interning and
 * atomic text files for the preprocessing tools (see text.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/hg_base.h"
#include "data/text.h"

/* ------------------------------------------------------------- UTF-8 */

int hg_utf8_seqlen(unsigned char c)
{
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return 2;
    if (c >= 0xE0 && c <= 0xEF)
        return 3;
    if (c >= 0xF0 && c <= 0xF4)
        return 4;
    return 1;
}

/* Length of the valid sequence at s[i..n), or 0 if it is malformed.
 * Table 3-7 of the Unicode standard: the second byte's range depends on
 * the lead byte, which excludes overlongs, surrogates and > U+10FFFF. */
static size_t utf8_valid_at(const unsigned char *s, size_t i, size_t n)
{
    unsigned char c = s[i];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0; /* overlong below U+0800 */
        else if (c == 0xED)
            hi = 0x9F; /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90; /* overlong below U+10000 */
        else if (c == 0xF4)
            hi = 0x8F; /* above U+10FFFF */
    } else {
        return 0; /* continuation byte, 0xC0, 0xC1, 0xF5..0xFF */
    }
    if (n - i < len)
        return 0;
    if (s[i + 1] < lo || s[i + 1] > hi)
        return 0;
    for (size_t k = 2; k < len; k++)
        if ((s[i + k] & 0xC0) != 0x80)
            return 0;
    return len;
}

int hg_text_validate_utf8(const char *str, size_t n, size_t *bad_offset)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        /* ASCII fast path, 8 bytes at a time */
        while (n - i >= 8) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (w & 0x8080808080808080ull)
                break;
            i += 8;
        }
        if (i >= n)
            break;
        size_t len = utf8_valid_at(s, i, n);
        if (!len) {
            if (bad_offset)
                *bad_offset = i;
            return -1;
        }
        i += len;
    }
    return 0;
}

/* -------------------------------------------------------- line reader */

void hg_line_reader_init(struct hg_line_reader *r, FILE *f, const char *name)
{
    memset(r, 0, sizeof(*r));
    r->f = f;
    r->name = name;
}

int hg_line_reader_next(struct hg_line_reader *r, char **line, size_t *len,
                        char *err, size_t errlen)
{
    errno = 0;
    ssize_t got = getline(&r->buf, &r->cap, r->f);
    if (got < 0) {
        if (ferror(r->f) || errno == ENOMEM)
            return hg_kerr(err, errlen, "%s:%lld: read error: %s", r->name,
                           (long long)r->lineno + 1,
                           strerror(errno ? errno : EIO));
        return 0;
    }
    r->lineno++;
    size_t n = (size_t)got;
    if (n && r->buf[n - 1] == '\n')
        n--;
    if (n && r->buf[n - 1] == '\r')
        n--;
    r->buf[n] = 0;
    const char *nul = memchr(r->buf, 0, n);
    size_t bad;
    if (hg_text_validate_utf8(r->buf, nul ? (size_t)(nul - r->buf) : n,
                              &bad) != 0)
        return hg_kerr(err, errlen,
                       "%s:%lld:%zu: invalid UTF-8 (byte 0x%02x)", r->name,
                       (long long)r->lineno, bad + 1,
                       (unsigned char)r->buf[bad]);
    if (nul)
        return hg_kerr(err, errlen, "%s:%lld:%zu: NUL byte in text", r->name,
                       (long long)r->lineno, (size_t)(nul - r->buf) + 1);
    *line = r->buf;
    *len = n;
    return 1;
}

void hg_line_reader_free(struct hg_line_reader *r)
{
    free(r->buf);
    r->buf = NULL;
    r->cap = 0;
}

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
           c == '\r';
}

int64_t hg_text_split(char *s, char ***tok, size_t *cap)
{
    int64_t n = 0;
    char *p = s;
    for (;;) {
        while (*p && is_space((unsigned char)*p))
            p++;
        if (!*p)
            break;
        if ((size_t)n == *cap) {
            size_t nc = *cap ? 2 * *cap : 64;
            char **t = realloc(*tok, nc * sizeof(*t));
            if (!t)
                return -1;
            *tok = t;
            *cap = nc;
        }
        (*tok)[n++] = p;
        while (*p && !is_space((unsigned char)*p))
            p++;
        if (!*p)
            break;
        *p++ = 0;
    }
    return n;
}

/* ------------------------------------------------------ string table */

#define STRTAB_BLOCK (1u << 20)

struct hg_strtab {
    char **str;       /* [n] */
    uint32_t *len;    /* [n] */
    uint64_t *hash;   /* [n] */
    int32_t n, ncap;
    int32_t *slot;    /* [nslot] open addressing, -1 empty */
    size_t nslot;
    char **blocks;    /* arena blocks (strings never move) */
    size_t nblocks, blockcap;
    char *cur;        /* free space in the newest block */
    size_t curleft;
};

static uint64_t str_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a, then a final mix */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return h;
}

struct hg_strtab *hg_strtab_new(void)
{
    struct hg_strtab *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->nslot = 1024;
    t->slot = malloc(t->nslot * sizeof(*t->slot));
    if (!t->slot) {
        free(t);
        return NULL;
    }
    memset(t->slot, 0xff, t->nslot * sizeof(*t->slot));
    return t;
}

void hg_strtab_free(struct hg_strtab *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nblocks; i++)
        free(t->blocks[i]);
    free(t->blocks);
    free(t->str);
    free(t->len);
    free(t->hash);
    free(t->slot);
    free(t);
}

static int32_t strtab_lookup(const struct hg_strtab *t, const char *s,
                             size_t n, uint64_t h, size_t *where)
{
    size_t mask = t->nslot - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        int32_t id = t->slot[i];
        if (id < 0) {
            *where = i;
            return -1;
        }
        if (t->hash[id] == h && t->len[id] == n &&
            memcmp(t->str[id], s, n) == 0)
            return id;
    }
}

int32_t hg_strtab_find(const struct hg_strtab *t, const char *s, size_t n)
{
    size_t where;
    return strtab_lookup(t, s, n, str_hash(s, n), &where);
}

static int strtab_grow_slots(struct hg_strtab *t)
{
    size_t ns = t->nslot * 2;
    int32_t *slot = malloc(ns * sizeof(*slot));
    if (!slot)
        return -1;
    memset(slot, 0xff, ns * sizeof(*slot));
    for (int32_t id = 0; id < t->n; id++) {
        size_t i = t->hash[id] & (ns - 1);
        while (slot[i] >= 0)
            i = (i + 1) & (ns - 1);
        slot[i] = id;
    }
    free(t->slot);
    t->slot = slot;
    t->nslot = ns;
    return 0;
}

static char *strtab_alloc(struct hg_strtab *t, size_t n)
{
    if (n > t->curleft) {
        size_t bs = n > STRTAB_BLOCK / 4 ? n : STRTAB_BLOCK;
        if (t->nblocks == t->blockcap) {
            size_t nc = t->blockcap ? 2 * t->blockcap : 16;
            char **b = realloc(t->blocks, nc * sizeof(*b));
            if (!b)
                return NULL;
            t->blocks = b;
            t->blockcap = nc;
        }
        char *blk = malloc(bs);
        if (!blk)
            return NULL;
        t->blocks[t->nblocks++] = blk;
        if (bs == n) /* a big string: keep the current block for later */
            return blk;
        t->cur = blk;
        t->curleft = bs;
    }
    char *p = t->cur;
    t->cur += n;
    t->curleft -= n;
    return p;
}

int32_t hg_strtab_intern(struct hg_strtab *t, const char *s, size_t n,
                         int *added)
{
    uint64_t h = str_hash(s, n);
    size_t where;
    int32_t id = strtab_lookup(t, s, n, h, &where);
    if (added)
        *added = 0;
    if (id >= 0)
        return id;
    if (n > UINT32_MAX || t->n == INT32_MAX)
        return -1;
    if ((size_t)(t->n + 1) * 2 > t->nslot) {
        if (strtab_grow_slots(t) != 0)
            return -1;
        strtab_lookup(t, s, n, h, &where);
    }
    if (t->n == t->ncap) {
        int32_t nc = t->ncap ? (t->ncap > INT32_MAX / 2 ? INT32_MAX : 2 * t->ncap)
                             : 256;
        char **str = realloc(t->str, (size_t)nc * sizeof(*str));
        if (!str)
            return -1;
        t->str = str;
        uint32_t *len = realloc(t->len, (size_t)nc * sizeof(*len));
        if (!len)
            return -1;
        t->len = len;
        uint64_t *hash = realloc(t->hash, (size_t)nc * sizeof(*hash));
        if (!hash)
            return -1;
        t->hash = hash;
        t->ncap = nc;
    }
    char *copy = strtab_alloc(t, n + 1);
    if (!copy)
        return -1;
    memcpy(copy, s, n);
    copy[n] = 0;
    id = t->n++;
    t->str[id] = copy;
    t->len[id] = (uint32_t)n;
    t->hash[id] = h;
    t->slot[where] = id;
    if (added)
        *added = 1;
    return id;
}

const char *hg_strtab_str(const struct hg_strtab *t, int32_t id)
{
    HG_CHECK(id >= 0 && id < t->n);
    return t->str[id];
}

size_t hg_strtab_len(const struct hg_strtab *t, int32_t id)
{
    HG_CHECK(id >= 0 && id < t->n);
    return t->len[id];
}

int32_t hg_strtab_size(const struct hg_strtab *t)
{
    return t->n;
}

/* ------------------------------------------------------ atomic files */

int hg_atomic_open(struct hg_atomic_file *a, const char *path, char *err,
                   size_t errlen)
{
    memset(a, 0, sizeof(*a));
    size_t n = strlen(path);
    a->path = malloc(n + 1);
    a->tmp = malloc(n + 5);
    if (!a->path || !a->tmp) {
        hg_atomic_abort(a);
        return hg_kerr(err, errlen, "%s: out of memory", path);
    }
    memcpy(a->path, path, n + 1);
    memcpy(a->tmp, path, n);
    memcpy(a->tmp + n, ".tmp", 5);
    int fd = open(a->tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || !(a->f = fdopen(fd, "w"))) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        free(a->path);
        free(a->tmp);
        memset(a, 0, sizeof(*a));
        return hg_kerr(err, errlen, "%s.tmp: cannot create: %s", path,
                       strerror(e));
    }
    return 0;
}

int hg_atomic_commit(struct hg_atomic_file *a, char *err, size_t errlen)
{
    int rc = 0;
    if (fflush(a->f) != 0 || ferror(a->f) || fsync(fileno(a->f)) != 0)
        rc = hg_kerr(err, errlen, "%s: write error: %s", a->tmp,
                     strerror(errno));
    if (fclose(a->f) != 0 && rc == 0)
        rc = hg_kerr(err, errlen, "%s: close error: %s", a->tmp,
                     strerror(errno));
    a->f = NULL;
    if (rc == 0 && rename(a->tmp, a->path) != 0)
        rc = hg_kerr(err, errlen, "%s: cannot rename to %s: %s", a->tmp,
                     a->path, strerror(errno));
    if (rc != 0)
        unlink(a->tmp);
    free(a->tmp);
    free(a->path);
    memset(a, 0, sizeof(*a));
    return rc;
}

void hg_atomic_abort(struct hg_atomic_file *a)
{
    if (a->f) {
        fclose(a->f);
        if (a->tmp)
            unlink(a->tmp);
    }
    free(a->tmp);
    free(a->path);
    memset(a, 0, sizeof(*a));
}
